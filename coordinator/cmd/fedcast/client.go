package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/shared/forecast"
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

func runClient(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "client", "client --join URL-or-token --data FILE [--server URL] [--max-epsilon E] [--max-windows N] [--model FILE] [--hub FILE]")
	join := fs.String("join", "", "join link http://HOST/join#TOKEN, or the bare token with --server; required")
	serverURL := fs.String("server", "", "coordinator URL (http://HOST:PORT) when --join is a bare token")
	dataPath := fs.String("data", "", "this LHA's case CSV (date,region,cases); required")
	maxEps := fs.Float64("max-epsilon", 0, "this LHA's own ε limit: sit out rounds beyond it (0: the study's budget)")
	maxWin := fs.Int("max-windows", 0, "train on at most this many windows per round, a fresh random sample each round when the file has more (0: all); costs no privacy, the update is clipped whatever it was computed from")
	modelOut := fs.String("model", "", "write the final global model as JSON here")
	quiet := fs.Bool("quiet", false, "print only the summary")
	hubOut := fs.String("hub", "", "write this LHA's quantile forecast of every area as a hub CSV here (computed locally, not sent)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *maxWin < 0 {
		return usagef("e.g. --max-windows 1000", "--max-windows must be 0 (all) or more, got %d", *maxWin)
	}
	if *join == "" || *dataPath == "" {
		return usagef("e.g. --join 'http://127.0.0.1:8080/join#TOKEN' --data my_cases.csv", "--join and --data are required")
	}
	link := *join
	if !strings.Contains(link, "://") {
		if *serverURL == "" {
			return usagef("give the full join link, or --server http://HOST:PORT", "--join is a bare token but --server is missing")
		}
		link = strings.TrimSuffix(*serverURL, "/") + "/join#" + link
	}
	data, err := series.ReadFile(*dataPath)
	if err != nil {
		return withHint(err)
	}
	s, err := lhaconn.Join(ctx, link, "", &session.Options{MaxEpsilon: *maxEps, MaxWindows: *maxWin})
	if err != nil {
		return err
	}
	defer s.Close()
	st := s.Study()
	x, y, err := session.TrainingData(st, data)
	if err != nil {
		return withHint(err)
	}
	// The file's warnings, in the page's words; missing days only where
	// the study window meets them.
	from, to := studyDays(st)
	printWarnings(env.Stderr, data, from, to)
	out := env.Stderr
	fmt.Fprintf(out, "joined %q as %s: N=%d, m=%d, T=%d, ε=%g, δ=%g, c=%.4f; %d training windows stay on this computer\n",
		st.Name, s.LHA(), st.Clients, st.ExpectedClients, st.Rounds, st.Epsilon, st.Delta, st.NoiseMultiplier, len(y))
	if st.InsecureSeed {
		fmt.Fprintln(out, "WARNING: the coordinator runs with --insecure-seed (research mode: no privacy guarantee)")
	}
	printStrategy(out, st)
	printMissed(out, len(s.Log()), st.Rounds)
	obs := session.Observer{Skipped: func(k session.Skip) { printSkip(out, k) }}
	if !*quiet {
		obs.Sent = func(o session.Outgoing) {
			fmt.Fprintf(out, "sent %s (round %d): %d bytes\n", o.Type, o.Round, o.Bytes)
		}
		obs.Result = func(r session.Result) {
			tag := ""
			if r.Resent {
				tag = " (re-sent, hash checked)"
			}
			fmt.Fprintf(out, "round %d released%s: ε coordinator %.6g, recomputed here %.6g, model %.12s…\n", r.Round, tag, r.Epsilon, r.LocalEpsilon, r.ModelSHA256)
		}
		obs.State = func(st session.State) {
			if st == session.StateReconnecting {
				fmt.Fprintln(out, "connection lost, reconnecting…")
			}
		}
		obs.Error = func(e *protocol.Error) { fmt.Fprintf(out, "coordinator: %s\n", forPeople(e.Error())) }
	}
	if err := s.RunWindows(ctx, x, y, obs); err != nil {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	fin := s.Finished()
	fmt.Fprintf(env.Stdout, "study finished (%s) after %d rounds: ε %.6g (recomputed here %.6g), final model %s\n",
		fin.Reason, fin.Rounds, fin.Epsilon, s.LocalEpsilon(), protocol.HashHex(s.GlobalModel()))
	printExampleBudget(env.Stdout, s)
	fcs, cov, ferr := session.Forecasts(st, data, s.Model())
	printForecasts(env.Stdout, st, fcs, cov, ferr)
	if *hubOut != "" {
		if ferr != nil {
			return ferr
		}
		if err := writeFileAtomic(*hubOut, func(w io.Writer) error { return forecast.WriteHub(w, session.HubForecasts(fcs)) }); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote the forecast of %s to %s (7 quantiles each)\n", plural(len(fcs), "area"), *hubOut)
	}
	if *modelOut != "" {
		w := s.GlobalModel() // the released model (an MR-MTL personal model stays out of files)
		return writeJSONFile(env, *modelOut, struct {
			Round       int       `json:"round"`
			Layers      []int     `json:"layers"`
			ModelSHA256 string    `json:"model_sha256"`
			Weights     []float64 `json:"weights"`
		}{fin.Rounds, st.Layers, protocol.HashHex(w), w})
	}
	return nil
}

// printForecasts writes the final model's forecast for each area of the
// LHA's data: the day it is for and the expected 7-day average of new
// cases per day (never below zero), as the browser page shows them.
func printForecasts(w io.Writer, st protocol.Study, fcs []session.AreaForecast, cov session.RecentCoverage, err error) {
	if err != nil {
		fmt.Fprintf(w, "no forecast: %s\n", forPeople(err.Error()))
		return
	}
	if len(fcs) == 0 {
		fmt.Fprintln(w, "no forecast: no area has enough days for one input window")
		return
	}
	fmt.Fprintf(w, "forecast with the final model (7-day average of new cases per day, from the last %d days of data; 95 %% range from this LHA's own recent errors):\n", max(st.History, 1))
	for _, f := range fcs {
		lo, hi, _ := f.Quantiles.Interval(0.95)
		fmt.Fprintf(w, "  %s: %s for %s (between %s and %s; input up to %s)\n", f.Area, oneDecimal(f.Quantiles.Median()),
			f.Target.Format(time.DateOnly), oneDecimal(lo), oneDecimal(hi), f.InputEnd.Format(time.DateOnly))
	}
	if cov.N > 0 {
		fmt.Fprintf(w, "on this LHA's own recent days such 95 %% ranges held %d of %d times, the 50 %% ranges %d of %d\n",
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

// printMissed says which rounds ran before this LHA joined, and why that
// is fine (nothing when none did).
func printMissed(w io.Writer, released, rounds int) {
	var which string
	switch {
	case released <= 0:
		return
	case released >= rounds:
		fmt.Fprintf(w, "all %d rounds ran before this LHA joined: its data were not used (no privacy spent on them); the final model's forecast follows\n", rounds)
		return
	case released == 1:
		which = "round 1 ran"
	case released == 2:
		which = "rounds 1 and 2 ran"
	default:
		which = fmt.Sprintf("rounds 1 to %d ran", released)
	}
	fmt.Fprintf(w, "%s before this LHA joined: that is fine, the shared model it starts from learnt from them and its data were not used in them; it takes part from round %d on\n",
		which, released+1)
}
