package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

func init() {
	register(&command{
		Name:    "client",
		Summary: "take part in a live study as a headless LHA (same code as the browser)",
		Run:     runClient,
	})
}

// insecureAckFlag is the client's acknowledgement of a research-mode
// (--insecure-seed) coordinator, the counterpart of the page's checkbox.
const insecureAckFlag = "i-understand-insecure-seed"

func runClient(ctx context.Context, env *Env, args []string) error {
	cf, err := parseClient(env, args)
	if err != nil {
		return err
	}
	data, err := series.ReadFile(cf.dataPath)
	if err != nil {
		return withHint(err)
	}
	opt := &session.Options{MaxEpsilon: cf.maxEps, MaxWindows: cf.maxWin, Refresh: rereader(env, cf.dataPath)}
	if cf.only {
		opt.Dial = visitDial
	}
	s, err := lhaconn.Join(ctx, cf.link, "", opt)
	if err != nil {
		return err
	}
	defer s.Close()
	st := s.Study()
	base := coordinatorBase(cf.link)
	if cf.only && !session.IsWeekly(st) {
		base = "" // --forecast sends only the hello: no download (but a weekly study's forecast reads the public file)
	}
	pub, err := loadPublic(ctx, env, st, cf.publicPath, base)
	if err != nil {
		return err
	}
	s.SetPublic(pub)
	if cf.only {
		return forecastOnly(ctx, env, s, data, pub, cf)
	}
	x, y, err := trainingData(st, data, pub)
	// A file the study cannot use (too short, days missing, …) still
	// takes part, present only: being ready says nothing of its content.
	presentOnly := session.Unusable(err)
	if err != nil && !presentOnly {
		return withHint(err)
	}
	// The file's warnings, in the page's words; missing days only where
	// the study window meets them.
	from, to := studyDays(st)
	printWarnings(env.Stderr, data, from, to)
	if presentOnly {
		printPresentOnly(env.Stderr, cf.dataPath, err)
	}
	if err := announceClient(env.Stderr, s, st, len(y), cf.insecureAck); err != nil {
		return err
	}
	if err := s.RunWindows(ctx, x, y, clientObserver(env, s, st, cf)); err != nil {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return replacedHint(err)
	}
	return finishClient(env, s, st, cf, data, pub, presentOnly)
}

// visitDial dials a forecast-only visit (protocol.ForecastOnly): the
// coordinator answers with the welcome and the latest model and closes,
// and the LHA's running client, if any, keeps its connection.
func visitDial(ctx context.Context, url string, protocols []string) (session.Conn, error) {
	return lhaconn.Dial(ctx, url, append(slices.Clip(protocols), protocol.ForecastOnly))
}

// replacedHint explains a session ended because another connection took
// this LHA's join link (a link holds one connection at a time): a page
// opened with the same link, or a second 'fedcast client' taking part.
func replacedHint(err error) error {
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeReplaced {
		return err
	}
	return fmt.Errorf("%w\nAnother connection with this join link took over (a page opened with the link, or another 'fedcast client' taking part), so this client stopped. "+
		"A join link takes part from one place at a time: close the other one and start this client again. To forecast while this client runs, use 'fedcast client --forecast' or 'fedcast forecast --model FILE': neither takes over", err)
}

// clientFlags are the flags of `fedcast client`.
type clientFlags struct {
	link, dataPath, modelOut, issuedOut, hubOut, publicPath string
	maxEps                                                  float64
	maxWin                                                  int
	only, quiet, insecureAck                                bool
	pub                                                     *publishFlags
}

// parseClient reads and checks client's flags; link is the full join link.
func parseClient(env *Env, args []string) (*clientFlags, error) {
	cf := &clientFlags{}
	fs := newFlagSet(env, "client", "client --join URL-or-token --data FILE [--server URL] [--max-epsilon E] [--max-windows N] [--model FILE] [--hub FILE] [--issued FILE] [--forecast] [--publish-epsilon E [--publish-delta D]] [--public FILE] [--i-understand-insecure-seed]")
	join := fs.String("join", "", "join link http://HOST/join#TOKEN, or the bare token with --server; required")
	serverURL := fs.String("server", "", "coordinator URL (http://HOST:PORT) when --join is a bare token")
	fs.StringVar(&cf.dataPath, "data", "", "this LHA's case CSV (date,region,cases); required")
	fs.Float64Var(&cf.maxEps, "max-epsilon", 0, "this LHA's own ε limit over the study's lifetime: sit out rounds beyond it (0: the study's budget when joining; to take part in rounds a later top-up adds, give a higher limit)")
	fs.IntVar(&cf.maxWin, "max-windows", 0, "train on at most this many windows per round, a fresh random sample each round when the file has more (0: all); costs no privacy, the update is clipped whatever it was computed from")
	fs.StringVar(&cf.modelOut, "model", "", "write the latest released model as JSON here (with the study's public parameters, for fedcast forecast --model)")
	fs.StringVar(&cf.issuedOut, "issued", "", "keep the forecasts this LHA issues in this CSV file: the guard scores the model on them once their outcomes are in the data (optional)")
	fs.BoolVar(&cf.only, "forecast", false, "forecast this week with the latest released model and leave: no training, no update, no ready (only the hello that fetches the model is sent). A running 'fedcast client --join' of this LHA keeps its connection and goes on taking part")
	fs.BoolVar(&cf.quiet, "quiet", false, "print only the summary")
	fs.StringVar(&cf.hubOut, "hub", "", "write this LHA's quantile forecast of every area as a hub CSV here (computed locally, not sent)")
	fs.BoolVar(&cf.insecureAck, insecureAckFlag, false, "take part even if the coordinator runs with --insecure-seed (research mode: predictable noise, NO privacy protection for this LHA's data)")
	cf.pub = addPublishFlags(fs)
	fs.StringVar(&cf.publicPath, "public", "", "check this copy of the study's public totals file against the SHA-256 the study declares (default: download the coordinator's and check it)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := cf.pub.check(); err != nil {
		return nil, err
	}
	if cf.maxWin < 0 {
		return nil, usagef("e.g. --max-windows 1000", "--max-windows must be 0 (all) or more, got %d", cf.maxWin)
	}
	if *join == "" || cf.dataPath == "" {
		return nil, usagef("e.g. --join 'http://127.0.0.1:8080/join#TOKEN' --data my_cases.csv", "--join and --data are required")
	}
	cf.link = *join
	if !strings.Contains(cf.link, "://") {
		if *serverURL == "" {
			return nil, usagef("give the full join link, or --server http://HOST:PORT", "--join is a bare token but --server is missing")
		}
		cf.link = strings.TrimSuffix(*serverURL, "/") + "/join#" + cf.link
	}
	return cf, nil
}

// announceClient says which study st s joined, with windows training
// windows, and refuses a research-mode coordinator without
// insecureAck.
func announceClient(out io.Writer, s *session.Session, st protocol.Study, windows int, insecureAck bool) error {
	fmt.Fprintf(out, "joined %q as %s: N=%d, m=%d, T=%d, ε=%g, δ=%g, c=%.4f; %d training windows stay on this computer\n",
		st.Name, s.LHA(), st.Clients, st.ExpectedClients, st.Rounds, st.Epsilon, st.Delta, st.NoiseMultiplier, windows)
	if st.InsecureSeed {
		if !insecureAck {
			// As the page needs its checkbox: nothing is trained or sent
			// before an explicit acknowledgement.
			return usagef("add --"+insecureAckFlag+" only if this is a research run on data that needs no protection",
				"the coordinator runs with --insecure-seed (research mode): its noise is predictable, so the updates of this LHA's data would have NO privacy protection; refusing to take part")
		}
		fmt.Fprintln(out, "WARNING: the coordinator runs with --insecure-seed (research mode: no privacy guarantee); taking part because --"+insecureAckFlag+" was given")
	}
	printStrategy(out, st)
	printMissed(out, len(s.Log()), st.Rounds)
	return nil
}

// clientObserver prints the session's progress to stderr (skips only,
// with --quiet) and keeps the latest model in --model's file during a
// continuing study.
func clientObserver(env *Env, s *session.Session, st protocol.Study, cf *clientFlags) session.Observer {
	out := env.Stderr
	obs := session.Observer{Skipped: func(k session.Skip) { printSkip(out, k) }}
	if !cf.quiet {
		obs.Sent = func(o session.Outgoing) {
			fmt.Fprintf(out, "sent %s (round %d): %d bytes\n", o.Type, o.Round, o.Bytes)
		}
		obs.Result = func(r session.Result) {
			tag := ""
			if r.Resent {
				tag = " (re-sent, hash checked)"
			}
			// s.Study(), not st: a top-up since the join adds campaigns
			fmt.Fprintf(out, "round %d released%s%s: ε coordinator %.6g, recomputed here %.6g, model %.12s…\n", r.Round, campaignTag(s.Study(), r.Round), tag, r.Epsilon, r.LocalEpsilon, r.ModelSHA256)
			printNextCampaign(out, s, r.Round)
		}
		topUps := topUpNotices(out, s, st, cf.maxEps)
		obs.State = func(state session.State) {
			if state == session.StateReconnecting {
				fmt.Fprintln(out, "connection lost, reconnecting…")
			}
			topUps()
		}
		obs.Error = func(e *protocol.Error) { fmt.Fprintln(out, coordinatorWords(e)) }
	}
	if cf.modelOut != "" && st.CampaignCount() > 1 {
		// A continuing study: the file always holds the latest released
		// model (the LHA forecasts with it between campaigns).
		shown := obs.Result
		obs.Result = func(r session.Result) {
			if shown != nil {
				shown(r)
			}
			if err := writeModel(env, cf.modelOut, r.Round, false, s.Study(), s.GlobalModel()); err != nil {
				fmt.Fprintf(out, "could not write the model to %s: %v\n", cf.modelOut, err)
			}
		}
	}
	return obs
}

// coordinatorWords is the line the client prints for an error the
// coordinator answered with during the study: the round it concerns and
// why, in the page's words (session.RefusalWords), not the protocol's
// code numbers.
func coordinatorWords(e *protocol.Error) string {
	why := session.RefusalWords(e)
	if why == "" {
		why = strings.ReplaceAll(e.Code.String(), "_", " ")
	}
	if e.Round > 0 && !strings.HasPrefix(why, fmt.Sprintf("Round %d ", e.Round)) {
		return fmt.Sprintf("coordinator, round %d: %s", e.Round, forPeople(why))
	}
	return "coordinator: " + forPeople(why)
}

// finishClient reports the finished study (st as joined) and writes the
// model, the guarded forecasts and the forecast to publish that the flags
// ask for (a present-only LHA's file may give no forecast).
func finishClient(env *Env, s *session.Session, st protocol.Study, cf *clientFlags, data *series.Dataset, pub *forecast.PublicInputs, presentOnly bool) error {
	fin := s.Finished()
	fmt.Fprintf(env.Stdout, "study finished (%s) after %d rounds: ε %.6g (recomputed here %.6g), final model %s\n",
		fin.Reason, fin.Rounds, fin.Epsilon, s.LocalEpsilon(), protocol.HashHex(s.GlobalModel()))
	printExampleBudget(env.Stdout, s)
	if st := s.Study(); st.Helper != nil {
		fmt.Fprintf(env.Stdout, "two servers: against either server on its own ε = %.4g; against everyone else, who sees only the released model, ε = %.4g (reasoned from √2 times the noise, not proven)\n", s.LocalEpsilon(), s.PublicEpsilon())
	}
	if cf.modelOut != "" {
		// the released model (an MR-MTL personal model stays out of files)
		if err := writeModel(env, cf.modelOut, fin.Rounds, true, s.Study(), s.GlobalModel()); err != nil {
			return err
		}
	}
	if err := writeGuarded(env, st, data, pub, s.Model(), cf.hubOut, cf.issuedOut); err != nil {
		if presentOnly {
			fmt.Fprintf(env.Stderr, "no forecast from %s: %s\n", cf.dataPath, forPeople(err.Error()))
			return nil
		}
		return err
	}
	return cf.pub.run(env, data, cf.dataPath, cf.hubOut, st, s.GlobalModel(), privacy.NewSecureRand())
}

// writeGuarded prints the guarded forecast of every area (the guard's
// headline, its reason, the model's own forecast beside it) and writes
// the hub file of the headlines and its sidecar FILE.methods.csv when
// hubOut is set.
func writeGuarded(env *Env, st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs, params []float64, hubOut, issuedPath string) error {
	issued, err := readIssued(issuedPath)
	if err != nil {
		return err
	}
	var gs []session.GuardedForecast
	var cov session.RecentCoverage
	if session.IsWeekly(st) {
		gs, err = session.WeeklyGuarded(st, data, pub, params, session.IssuedOrigins(st, data, issued))
	} else {
		gs, cov, err = guardedForecasts(st, data, params, session.IssuedOrigins(st, data, issued))
	}
	printGuarded(env.Stdout, st, gs, cov, err)
	if err == nil && issuedPath != "" {
		all := session.MergeIssued(issued, session.IssuedOf(gs))
		if err := writeFileAtomic(issuedPath, func(w io.Writer) error { return session.WriteIssued(w, all) }); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "recorded this forecast in %s (%s issued so far; the guard scores them once their outcomes are in the file)\n", issuedPath, plural(len(all), "forecast"))
	}
	if hubOut == "" {
		return nil
	}
	if err != nil {
		return err
	}
	if err := writeFileAtomic(hubOut, func(w io.Writer) error { return forecast.WriteHub(w, session.GuardedHub(gs)) }); err != nil {
		return err
	}
	side := hubOut + ".methods.csv"
	if err := writeFileAtomic(side, func(w io.Writer) error { return session.WriteMethods(w, gs) }); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote the forecast of %s to %s (7 quantiles each) and the method each area used to %s\n", plural(len(gs), "area"), hubOut, side)
	return nil
}

// readIssued reads the issued-forecasts file (none when path is "" or the
// file does not exist yet).
func readIssued(path string) ([]session.Issued, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return session.ReadIssued(f, path)
}

// trainingData is this LHA's training windows: the weekly design's with
// the public inputs in a weekly study (session.WeeklyTrainingData),
// session.TrainingData's otherwise.
func trainingData(st protocol.Study, data *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error) {
	if session.IsWeekly(st) {
		return session.WeeklyTrainingData(st, data, pub)
	}
	return session.TrainingData(st, data)
}

// guardedForecasts is session.Guarded with the study's model.
func guardedForecasts(st protocol.Study, data *series.Dataset, params []float64, issued []forecast.GuardOrigin) ([]session.GuardedForecast, session.RecentCoverage, error) {
	var cov session.RecentCoverage
	if len(st.Layers) < 2 {
		return nil, cov, &session.LayoutError{Have: len(params), Layers: st.Layers}
	}
	m := nn.NewMLP(st.Layers...)
	if m.NumParams() != len(params) {
		return nil, cov, &session.LayoutError{Have: len(params), Want: m.NumParams(), Layers: st.Layers}
	}
	point, err := session.DesignPoint(st, m, params)
	if err != nil {
		return nil, cov, err
	}
	return session.Guarded(st, data, point, issued, nil)
}

// writeModel writes a released model with the study's public parameters
// (session.ModelFile).
func writeModel(env *Env, path string, round int, final bool, st protocol.Study, w []float64) error {
	return writeJSONFile(env, path, session.ModelFile{Model: protocol.NewModel(round, final, st.Layers, w), Study: &st})
}

// forecastOnly is client --forecast: it reads the latest released model
// (nothing is sent after the hello: no ready, no update), forecasts every
// area of the file under the guard, writes the model and hub files asked
// for, and the forecast to publish with --publish-epsilon.
func forecastOnly(ctx context.Context, env *Env, s *session.Session, data *series.Dataset, pub *forecast.PublicInputs, cf *clientFlags) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w, round, err := s.Latest(ctx)
	if err != nil {
		return err
	}
	s.Close()
	st := s.Study()
	fmt.Fprintf(env.Stderr, "read the model released after round %d of %q (model %.12s…); nothing was sent but the hello that fetched it: no update, and this LHA was not counted as ready\n",
		round, st.Name, protocol.HashHex(w))
	if cf.modelOut != "" {
		if err := writeModel(env, cf.modelOut, round, s.Finished() != nil, st, w); err != nil {
			return err
		}
	}
	if err := writeGuarded(env, st, data, pub, w, cf.hubOut, cf.issuedOut); err != nil {
		return err
	}
	return cf.pub.run(env, data, cf.dataPath, cf.hubOut, st, w, privacy.NewSecureRand())
}

// rereader reads the LHA's file again at the start of each campaign of a
// continuing study (session.Options.Refresh), saying so; on a bad file it
// says what is wrong and the client trains on the data it had.
func rereader(env *Env, path string) func(int) (*series.Dataset, error) {
	return func(campaign int) (*series.Dataset, error) {
		d, err := series.ReadFile(path)
		if err != nil {
			fmt.Fprintf(env.Stderr, "campaign %d: %s could not be read again (%s); training on the data read before\n", campaign, path, forPeople(err.Error()))
			return nil, err
		}
		first, last := d.Span()
		fmt.Fprintf(env.Stderr, "campaign %d: read %s again: %s from %s to %s\n", campaign, path, plural(len(d.Regions), "area"), first.Format(time.DateOnly), last.Format(time.DateOnly))
		return d, nil
	}
}

// topUpNotices returns a function that prints each top-up of the study
// (joined as st) that the session has accepted since it last ran (a
// reconnection's welcome brings them), and whether this LHA's limit
// (maxEps, or the budget it joined under) keeps it out of the added rounds.
func topUpNotices(w io.Writer, s *session.Session, st protocol.Study, maxEps float64) func() {
	seen, limit := len(st.TopUps), maxEps
	if limit == 0 {
		limit = st.Epsilon
	}
	return func() {
		ups := s.Study().TopUps
		for _, t := range ups[min(seen, len(ups)):] {
			fmt.Fprint(w, topUpWords(t, limit))
		}
		seen = max(seen, len(ups))
	}
}

// topUpWords says what top-up t means for an LHA whose own limit is limit.
func topUpWords(t protocol.TopUp, limit float64) string {
	msg := fmt.Sprintf("the coordinator raised the study's lifetime budget (top-up %d, %s): ε %g → %g, %s of %s added\n",
		t.Number, t.At.Local().Format("2 January 15:04"), t.FromEpsilon, t.Epsilon, plural(t.Campaigns, "campaign"), plural(t.Rounds, "round"))
	if t.Epsilon > limit {
		return msg + fmt.Sprintf("  this client's own limit is ε = %g: it sits out any round that would take the study past it; to agree to the new budget, start it again with --max-epsilon %g\n", limit, t.Epsilon)
	}
	return msg + fmt.Sprintf("  within this client's own limit ε = %g: it takes part in the added rounds\n", limit)
}

// campaignTag names a round's campaign in a continuing study ("" with
// one campaign).
func campaignTag(st protocol.Study, round int) string {
	if st.CampaignCount() <= 1 {
		return ""
	}
	k, i := st.CampaignOf(round)
	return fmt.Sprintf(" (campaign %d of %d, round %d of %d)", k, st.CampaignCount(), i, st.CampaignRounds())
}

// printNextCampaign says, after the last round of a campaign that is not
// the study's last, when the next campaign starts and what the LHA may do
// meanwhile.
func printNextCampaign(w io.Writer, s *session.Session, round int) {
	st := s.Study()
	if _, i := st.CampaignOf(round); st.CampaignCount() <= 1 || i != st.CampaignRounds() || round >= st.Rounds {
		return
	}
	if k, at, ok := s.NextCampaign(time.Now()); ok {
		fmt.Fprintf(w, "campaign %d of %d ended; campaign %d starts at %s: keep this client running (an LHA that misses a campaign may come back for the next); meanwhile fedcast forecast --model FILE forecasts with the latest model at no privacy cost\n",
			k-1, st.CampaignCount(), k, at.Local().Format("2006-01-02 15:04:05"))
	}
}

// printGuarded writes each area's guarded forecast as the page shows it:
// the headline in words ("no change" or "shared model") with its value,
// the guard's reason, and the shared model's own forecast beside it (the
// 7-day average of new cases per day, never below zero).
func printGuarded(w io.Writer, st protocol.Study, gs []session.GuardedForecast, cov session.RecentCoverage, err error) {
	if err != nil {
		fmt.Fprintf(w, "no forecast: %s\n", forPeople(err.Error()))
		return
	}
	if len(gs) == 0 {
		fmt.Fprintln(w, "no forecast: no area has enough days for one input window")
		return
	}
	inputs := fmt.Sprintf("the last %d days of data", max(st.History, 1))
	if session.IsWeekly(st) {
		inputs = fmt.Sprintf("up to %d weeks of data and the public national and state totals", st.Weekly.HistoryWeeks)
	}
	fmt.Fprintf(w, "forecast (7-day average of new cases per day, from %s; 95 %% range from this LHA's own recent errors):\n", inputs)
	for _, g := range gs {
		f := g.Forecast
		lo, hi, _ := f.Quantiles.Interval(0.95)
		fmt.Fprintf(w, "  %s: %s (%s) for %s (between %s and %s; input up to %s)\n", f.Area, oneDecimal(f.Quantiles.Median()), g.Method,
			f.Target.Format(time.DateOnly), oneDecimal(lo), oneDecimal(hi), f.InputEnd.Format(time.DateOnly))
		model := "shared model's own forecast: " + oneDecimal(g.Model.Point)
		if g.ModelClamped {
			model += " (FLAGGED: beyond any change in this LHA's history; held at " + oneDecimal(g.ModelShown) + ")"
		}
		fmt.Fprintf(w, "    %s\n    %s\n", g.Reason(), model)
	}
	if cov.N > 0 {
		fmt.Fprintf(w, "on this LHA's own recent days the headlined method's 95 %% ranges held %d of %d times, the 50 %% ranges %d of %d\n",
			cov.In95, cov.N, cov.In50, cov.N)
	}
}

// oneDecimal formats a forecast value, never below 0.
func oneDecimal(v float64) string { return strconv.FormatFloat(math.Max(0, v), 'f', 1, 64) }

// studyDays returns the study window (zero for an open end or a date
// that does not parse; TrainingData has checked them).
func studyDays(st protocol.Study) (from, to time.Time) {
	from, _ = time.Parse(time.DateOnly, st.From)
	to, _ = time.Parse(time.DateOnly, st.To)
	return from, to
}

// printMissed says which rounds ran before this client connected, and why
// that is fine (nothing when none did). It cannot tell whether this LHA
// took part in them (from an earlier client, or its page), so it does not
// say that its data were not used.
func printMissed(w io.Writer, released, rounds int) {
	var which string
	switch {
	case released <= 0:
		return
	case released >= rounds:
		fmt.Fprintf(w, "all %d rounds ran before this client connected: it trains in none of them (this LHA's data were used in them only if it took part then, from an earlier client or its page); the final model's forecast follows\n", rounds)
		return
	case released == 1:
		which = "round 1 ran"
	case released == 2:
		which = "rounds 1 and 2 ran"
	default:
		which = fmt.Sprintf("rounds 1 to %d ran", released)
	}
	fmt.Fprintf(w, "%s before this client connected: that is fine, the shared model it starts from learnt from them (this LHA's data were used in them only if it took part then, from an earlier client or its page; the ε shown counts every round either way); it takes part from round %d on\n",
		which, released+1)
}

// printPresentOnly says why the study cannot use the LHA's file, what to
// do, and that the client takes part present only.
func printPresentOnly(w io.Writer, path string, err error) {
	hinted := withHint(err)
	fmt.Fprintf(w, "this study cannot use %s: %s\n", path, forPeople(hinted.Error()))
	if hinted == err { // no hint of its own
		fmt.Fprintln(w, "  how to fix it: export more days for every area; if your authority has no more, tell your coordinator: the file is too short for this study")
	}
	fmt.Fprintln(w, "taking part present only: this LHA is counted as ready, trains nothing and sends a stand-in of zeros of an update's size every round; nothing about the file is sent")
}
