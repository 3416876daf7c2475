package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/secagg"
)

func init() {
	register(&command{
		Name:    "study",
		Summary: "create a live study file with join tokens ('study new'); raise its lifetime budget ('study topup')",
		Run:     runStudy,
	})
}

// studyNewUsage is the help of study new.
const studyNewUsage = "study new (--lhas N | --names A,B,…) --epsilon E --out FILE [--preset default|paper|lipschitz|weekly|weekly-trend] [flags]\n\n" +
	"--preset default is fedcast's design (log-change features over 13 input days anchored at the no-change forecast,\n" +
	"MLP 13-16-1 pretrained on synthetic outbreaks, T=5, every LHA every round, E=30, S=0.5, lr=0.001, forecast change\n" +
	"damped by 0.5); --preset paper the paper's (10 input days, MLP 10-128-64-32-1 on counts, T=75, m=100, E=30, S=0.5,\n" +
	"lr=0.001); --preset lipschitz the publishable design (docs/privacy.md, \"Publishing a forecast\": weekly averages of\n" +
	"the last 3 weeks, trailing, H=15, MLP 15-8-1 with every layer's spectral norm at most 1, T=5, E=30, S=0.5, lr=0.01,\n" +
	"damped by 0.1), whose model the LHAs can publish with --publish-epsilon; --preset weekly the design over time (next\n" +
	"7-day total from a year of the area's own, the national and state totals and holidays; needs --public FILE; the\n" +
	"default of --campaigns K when --public is given); --preset weekly-trend the same with its median mixed with half\n" +
	"the state total's last weekly change, except in weeks with public holidays (docs/backtest.md).\n" +
	"--history, --rounds, --expected, --clip, --epochs and --lr override single settings."

func runStudy(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "topup" {
		return runStudyTopUp(ctx, env, args[1:])
	}
	if len(args) == 0 || args[0] != "new" {
		return usagef("run 'fedcast study new -h'", "unknown or missing subcommand (want 'study new' or 'study topup')")
	}
	return runStudyNew(env, args[1:])
}

// studyNewFlags are the flags of study new that are not fields of the
// study file (those are set on the template directly).
type studyNewFlags struct {
	fs                             *flag.FlagSet
	preset, names, out, addr, acct *string
	links                          *string
	lhas, campaigns                *int
	every, length                  *time.Duration
	usePlan                        *bool
	helper                         helperFlags
	declarePublic                  func(*study.File) error
}

// newStudyFlags defines the flags of study new; those that are study
// parameters write into f. A parameter's default is the study file's (the
// presets and protocol's): the flags repeat it only to show it in the help.
func newStudyFlags(env *Env, f *study.File) *studyNewFlags {
	fs := newFlagSet(env, "study new", studyNewUsage)
	o := &studyNewFlags{fs: fs,
		preset: fs.String("preset", "default", "study design: default (fedcast's monthly), paper (every setting of the paper), lipschitz (a model the LHAs can publish), weekly or weekly-trend (both need --public)"),
		lhas:   fs.Int("lhas", 0, "number of LHAs to enrol (named \"LHA 001\" …)"),
		names:  fs.String("names", "", "comma-separated LHA names (instead of --lhas)"),
		out:    fs.String("out", "", "study file to write (must not exist); required"),
		addr:   fs.String("addr", "127.0.0.1:8080", "coordinator address used in the printed links"),
		links:  fs.String("links", "", "also write the join links to this CSV file (name,link; the admin link last; mode 0600; a secret, must not exist)"),
	}
	fs.StringVar(&f.Name, "name", "fedcast study", "study name")
	fs.Float64Var(&f.Epsilon, "epsilon", 0, "privacy budget ε; required")
	fs.Float64Var(&f.Delta, "delta", model.PaperDelta, "δ")
	fs.IntVar(&f.Rounds, "rounds", 0, "rounds T, per campaign with --campaigns (default: the preset's, 5 or 75)")
	o.campaigns = fs.Int("campaigns", 0, "a continuing study of this many training campaigns on a public schedule (with --every); --epsilon is then the lifetime budget of all of them")
	o.every = fs.Duration("every", 0, "time between campaign starts (with --campaigns), e.g. 168h for weekly")
	fs.IntVar(&f.ExpectedClients, "expected", 0, "expected LHAs per round m, q = m/N (default: the preset's, all N or min(100, N))")
	fs.Float64Var(&f.ClipNorm, "clip", 0, "clip bound S, the study file's clip_norm (default: the preset's, 0.5)")
	fs.IntVar(&f.LocalEpochs, "epochs", 0, "local epochs E, full-batch Adam steps (default: the preset's, 30)")
	fs.Float64Var(&f.LearningRate, "lr", 0, "learning rate (default: the preset's, 0.001 for both)")
	fs.IntVar(&f.History, "history", 0, "input days H (default: the preset's, 13 or 10)")
	fs.IntVar(&f.Horizon, "horizon", model.PaperHorizon, "days ahead P")
	fs.StringVar(&f.Smoothing, "smoothing", "centered", "7-day average: centered or trailing")
	fs.StringVar(&f.From, "from", "", "first day of the study window (YYYY-MM-DD; empty: all)")
	fs.StringVar(&f.To, "to", "", "last day of the study window (YYYY-MM-DD; empty: all)")
	o.length = fs.Duration("round-length", study.DefaultRoundLength, "round length L: rounds open every L on a fixed public schedule; updates are taken until L minus the slack (L/10)")
	fs.IntVar(&f.StartQuorum, "quorum", 0, "LHAs online before round 1 starts and after a restart (0: all)")
	o.acct = fs.String("accountant", string(privacy.DefaultAccountant), "privacy accountant: rdp (Rényi DP) or pld (privacy loss distribution, less noise for the same ε)")
	fs.StringVar(&f.NoiseSchedule, "noise-schedule", "", "per-round noise multipliers: constant (default), linear:r, step:j,r, geometric:r or c1,c2,…,cT (docs/strategies.md)")
	fs.StringVar(&f.Strategy, "strategy", "fedavg", "fedavg, mrmtl (with --lambda) or cyclic (every LHA trains in turn, one turn per round length, m = N; docs/strategies.md)")
	fs.Float64Var(&f.Lambda, "lambda", 0, "MR-MTL's penalty λ ≥ 0 (--strategy mrmtl)")
	fs.StringVar(&f.Privacy, "privacy", "client", "client (client-level DP at the coordinator), example (local DP-SGD in each LHA, --example-epsilon, no --epsilon) or both")
	fs.Float64Var(&f.ExampleEpsilon, "example-epsilon", 0, "each LHA's example-level ε for local DP-SGD (--privacy example or both)")
	o.usePlan = fs.Bool("plan", false, "use the planner's parameters (fedcast plan) where no flag sets them")
	o.helper = addHelperFlags(fs)
	o.declarePublic = publicFlags(env, fs)
	return o
}

// lhaNames returns the LHAs to enrol, from --names or --lhas.
func (o *studyNewFlags) lhaNames() ([]string, error) {
	var names []string
	switch {
	case *o.names != "" && *o.lhas != 0:
		return nil, usagef("", "give --lhas or --names, not both")
	case *o.names != "":
		for _, s := range strings.Split(*o.names, ",") {
			names = append(names, strings.TrimSpace(s))
		}
	case *o.lhas > 0:
		for i := 1; i <= *o.lhas; i++ {
			names = append(names, fmt.Sprintf("LHA %03d", i))
		}
	default:
		return nil, usagef("e.g. --lhas 20", "no LHAs: give --lhas N or --names A,B")
	}
	return names, nil
}

// template completes the study file's template from the flags that are
// not its fields, and checks the combinations the flags allow.
func (o *studyNewFlags) template(f *study.File) error {
	kind, err := privacy.ParseAccountantKind(*o.acct)
	if err != nil {
		return usagef("--accountant is rdp or pld", "%v", err)
	}
	f.Accountant = kind
	if f.Helper, err = o.helper.ref(); err != nil {
		return err
	}
	f.RoundLength = study.Duration(*o.length)
	if *o.out == "" {
		return usagef("e.g. --out study.json", "--out is required")
	}
	if *o.links != "" {
		if _, err := os.Stat(*o.links); err == nil {
			return usagef("choose another --links", "%s exists: a links file is never overwritten", *o.links)
		}
		f.LinksFile = *o.links
	}
	if f.Strategy == "fedavg" {
		f.Strategy = "" // the default, written as before
	}
	if f.Privacy == "client" {
		f.Privacy = ""
	}
	if f.Privacy != "example" {
		switch e := f.Epsilon; {
		case !flagSet(o.fs, "epsilon"):
			return usagef("e.g. --epsilon 1", "--epsilon is required")
		case !(e > 0) || math.IsInf(e, 1):
			return usagef("e.g. --epsilon 2", "--epsilon %g is not a budget: a live study needs a number above 0, such as 2", e)
		}
	}
	return checkPeriod(f.From, f.To)
}

// checkPeriod refuses a --from or --to that is not a date, and a --from
// after --to, naming the flags.
func checkPeriod(from, to string) error {
	var days [2]time.Time
	for i, v := range [2]struct{ flag, day string }{{"from", from}, {"to", to}} {
		if v.day == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, v.day)
		if err != nil {
			return usagef("write the day as YYYY-MM-DD, e.g. 2020-10-05", "--%s %q is not a date", v.flag, v.day)
		}
		days[i] = d
	}
	if from != "" && to != "" && days[0].After(days[1]) {
		return usagef("the study period runs from --from to --to: swap them", "--from %s is after --to %s: the study period would hold no day", from, to)
	}
	return nil
}

func runStudyNew(env *Env, args []string) error {
	var f study.File
	o := newStudyFlags(env, &f)
	if err := parseFlags(o.fs, args); err != nil {
		return err
	}
	names, err := o.lhaNames()
	if err != nil {
		return err
	}
	if err := o.template(&f); err != nil {
		return err
	}
	if q := f.StartQuorum; q < 0 || q > len(names) {
		// It said "invalid study file: start_quorum is 9, must be in [0, N=5]".
		return usagef(fmt.Sprintf("--quorum is how many of the %d LHAs must be ready before round 1 and after a restart: 1 to %d, or 0 for all", len(names), len(names)),
			"--quorum %d: the study enrols %d LHAs", q, len(names))
	}
	design, err := studyPreset(env, o.fs, *o.preset, *o.campaigns)
	if err != nil {
		return err
	}
	if err := lipschitzFlags(o.fs, &f, design); err != nil {
		return err
	}
	if err := checkStudyFlags(o.fs, &f, *o.campaigns, *o.every, design); err != nil {
		return err
	}
	if err := o.declarePublic(&f); err != nil {
		return err
	}
	pl, err := studyPlan(len(names), &f, *o.usePlan, flagSet(o.fs, "rounds"))
	if err != nil {
		return err
	}
	file, secrets, err := study.Create(study.CreateOptions{Template: f, Names: names, Design: &design})
	if err != nil {
		return err
	}
	b, err := file.Marshal()
	if err != nil {
		return err
	}
	if err := writeNew(*o.out, b); errors.Is(err, os.ErrExist) {
		return usagef("choose another --out", "%s exists: a study file is never overwritten", *o.out)
	} else if err != nil {
		return err
	}
	base := "http://" + *o.addr
	if *o.links != "" {
		if err := writeNew(*o.links, linksCSV(file, secrets, base)); err != nil {
			// Its tokens would be lost: take the study file back.
			if rerr := os.Remove(*o.out); rerr != nil {
				return fmt.Errorf("the links file could not be written (%w), and the study file %s, whose tokens are lost with it, could not be removed (%w): delete it and run study new again", err, *o.out, rerr)
			}
			return usagef("choose a --links file in a folder that exists and can be written, and run study new again",
				"the links file could not be written (%v): nothing was written (the study file %s was removed again)", err, *o.out)
		}
	}
	w := env.Stdout
	printStudyNew(w, file, *o.out, design)
	own, err := studyAssessment(file)
	if err != nil {
		return err
	}
	printStudyPlan(w, file, pl, own, *o.usePlan)
	if pl != nil {
		fmt.Fprintln(w, wisWords)
	}
	printQuorum(w, file)
	printLinks(w, file, secrets, base, *o.links)
	fmt.Fprintf(w, "Admin API: Authorization: Bearer %s\n", secrets.Admin)
	fmt.Fprintf(w, "Start it with: fedcast serve --study %s --addr %s\n", *o.out, *o.addr)
	return nil
}

// weakEpsilonAbove is the lifetime ε above which study new and study
// topup warn that the promise is weak.
const weakEpsilonAbove = 10

// weakEpsilon is the warning for a lifetime budget above
// weakEpsilonAbove ("" up to it): the guarantee bounds how much more
// likely any outcome becomes by a factor e^ε, which at ε = 10 is already
// 22,026.
func weakEpsilon(eps float64) string {
	if eps <= weakEpsilonAbove {
		return ""
	}
	return fmt.Sprintf("ε = %g is a weak promise: differential privacy lets anything seen become up to e^ε times more likely with an LHA's data than without, "+
		"and above ε = %d that says little about what the shared model reveals of one LHA. The LHAs see this ε on their page and can set a lower limit of their own.",
		eps, weakEpsilonAbove)
}

// printStudyNew says what study new wrote: the privacy parameters and the
// noise, the schedule, the helper and the design.
func printStudyNew(w io.Writer, file *study.File, out string, design model.Design) {
	c, _ := file.Calibrate()
	cs, _ := file.CalibrateSchedule()
	fmt.Fprintf(w, "wrote %s: N=%d LHAs, m=%d (q=%.4g), T=%d, ε=%g, δ=%g → noise multiplier c=%.4f (%s accountant)\n",
		out, len(file.LHAs), file.ExpectedClients, file.SampleRate(), file.Rounds, file.Epsilon, file.Delta, c, file.AccountantKind())
	if s := weakEpsilon(file.Epsilon); s != "" {
		fmt.Fprintln(w, "warning: "+s)
	}
	if file.Strategy == "cyclic" {
		fmt.Fprintf(w, "Cyclic FL: each of the T=%d rounds gives every LHA one turn, in an order fixed by this file's SHA-256 (public); %d turns of %v each; each LHA's ε counts its own hand-offs only\n",
			file.Rounds, file.Rounds*len(file.LHAs), time.Duration(file.RoundLength))
	}
	printCampaigns(w, file)
	if cs != nil {
		fmt.Fprintf(w, "Noise schedule %s: c_1 = %.4f … c_%d = %.4f (c above is the smallest; every LHA checks each round's c)\n",
			file.NoiseSchedule, cs[0], len(cs), cs[len(cs)-1])
	}
	printHelper(w, file.Helper, file.Epsilon)
	fmt.Fprintf(w, "Design %s: model %v on %s, E=%d, S=%g, learning rate %g\n", design.Name, file.Layers(), file.Features, file.LocalEpochs, file.ClipNorm, file.LearningRate)
}

// lipschitzFlags sets the Lipschitz design's windows (trailing weekly
// averages, 7 days ahead, whole weeks of input) and refuses flags that
// would break them; other designs are left alone.
func lipschitzFlags(fs *flag.FlagSet, f *study.File, d model.Design) error {
	if d.Features != model.Lipschitz {
		return nil
	}
	if flagSet(fs, "smoothing") && f.Smoothing != "trailing" {
		return usagef("leave out --smoothing", "--preset lipschitz reads trailing weekly averages: --smoothing %s does not fit", f.Smoothing)
	}
	if f.Strategy != "" {
		return usagef("leave out --strategy", "--preset lipschitz trains with FedAvg only: with --strategy %s the released models would not keep every layer's norm at most 1", f.Strategy)
	}
	if f.Privacy != "" {
		return usagef("leave out --privacy", "--preset lipschitz trains with client-level privacy only: with --privacy %s the released models would not keep every layer's norm at most 1", f.Privacy)
	}
	if f.Horizon != publish.WeekDays {
		return usagef("leave out --horizon", "--preset lipschitz forecasts the next 7 days: --horizon %d does not fit", f.Horizon)
	}
	if flagSet(fs, "history") && (f.History < 8 || (f.History-1)%7 != 0) {
		return usagef("e.g. --history 15 (3 weeks) or 22 (4 weeks)", "--preset lipschitz reads whole weeks: --history must be 7·(weeks−1)+1, got %d", f.History)
	}
	f.Smoothing, f.Features = "trailing", string(model.Lipschitz)
	return nil
}

// wisWords says what the planner's "relative WIS" is, in words.
const wisWords = "(Relative WIS: the forecasts' error, their ranges included, as a multiple of the no-change forecast's; below 1 beats no change; 10 or more: the shared model is noise.)"

// printQuorum says when round 1 opens: once the start quorum is ready (it
// was said nowhere; with the default, all N, one absent LHA holds the
// study).
func printQuorum(w io.Writer, file *study.File) {
	n, q := len(file.LHAs), file.Quorum()
	who := fmt.Sprintf("%d of the %d LHAs are", q, n)
	if q == n {
		switch n {
		case 1:
			who = "the LHA is"
		case 2:
			who = "both LHAs are"
		default:
			who = fmt.Sprintf("all %d LHAs are", n)
		}
	}
	fmt.Fprintf(w, "Round 1 opens when %s ready (chose and checked a file and joined), however long that takes (--quorum sets how many); "+
		"after a restart the rounds wait for as many again, at most %s.\n", who, file.ResumeWait())
}

// printCampaigns states a continuing study's schedule (nothing for one
// campaign).
func printCampaigns(w io.Writer, file *study.File) {
	if file.Campaigns > 1 {
		fmt.Fprintf(w, "Continuing study: %d campaigns of %d rounds, one every %s (public, fixed now); ε=%g is the lifetime budget of all %d rounds, and the noise makes them compose to it exactly\n",
			file.Campaigns, file.Rounds/file.Campaigns, days(time.Duration(file.Every)), file.Epsilon, file.Rounds)
	}
}

// checkStudyFlags refuses flags given as 0 or less, then applies the
// campaign flags (campaignFlags).
func checkStudyFlags(fs *flag.FlagSet, f *study.File, campaigns int, every time.Duration, design model.Design) error {
	for _, c := range []struct {
		name string
		bad  bool
	}{{"history", f.History < 1}, {"rounds", f.Rounds < 1}, {"expected", f.ExpectedClients < 1}, {"clip", !(f.ClipNorm > 0)}, {"epochs", f.LocalEpochs < 1}, {"lr", !(f.LearningRate > 0)}} {
		if c.bad && flagSet(fs, c.name) {
			return usagef("", "--%s must be above 0", c.name)
		}
	}
	return campaignFlags(f, campaigns, every, design)
}

// campaignFlags turns --campaigns K --every D (--rounds T per campaign)
// into the study file's campaigns, every and rounds (K·T, all rounds).
func campaignFlags(f *study.File, k int, every time.Duration, design model.Design) error {
	switch {
	case k < 0:
		return usagef("e.g. --campaigns 4 --every 168h", "--campaigns must be 1 or more, got %d", k)
	case k <= 1:
		if every != 0 {
			return usagef("e.g. --campaigns 4 --every 168h", "--every needs --campaigns")
		}
		return nil
	case every <= 0:
		return usagef("e.g. --campaigns 4 --every 168h", "--campaigns needs --every, the time between campaign starts")
	}
	t := f.Rounds
	if t == 0 {
		t = design.Rounds
	}
	f.Campaigns, f.Every, f.Rounds = k, study.Duration(every), k*t
	return nil
}

// writeNew writes b to a new file path with mode 0600 (os.ErrExist if it
// exists).
func writeNew(path string, b []byte) error { return writeNewMode(path, b, 0o600) }

// writeNewMode is writeNew with the new file's mode (before the umask).
func writeNewMode(path string, b []byte, mode os.FileMode) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := fh.Write(b); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// linksCSV is the links file: a header name,link, one row per LHA with its
// full join link, and the admin dashboard's link as the last row.
func linksCSV(f *study.File, sec *study.Secrets, base string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"name", "link"})
	for i, l := range f.LHAs {
		w.Write([]string{l.Name, base + "/join#" + sec.LHAs[i]})
	}
	w.Write([]string{"admin", base + "/admin#" + sec.Admin})
	w.Flush()
	return b.Bytes()
}

// printLinks prints the days every file must cover, where the links file
// is (or that the tokens are shown once), and the links.
func printLinks(w io.Writer, file *study.File, secrets *study.Secrets, base, links string) {
	for _, l := range file.WindowLines() {
		fmt.Fprintln(w, l)
	}
	if links != "" {
		fmt.Fprintf(w, "Wrote the join links and the admin link to %s (CSV name,link; mode 0600). It is a SECRET: anyone with a link can join as that LHA or run the dashboard. Keep it safe; delete it once the links are sent.\n", links)
		fmt.Fprintf(w, "The study file keeps only the tokens' SHA-256: the links themselves are in %s and below, nowhere else.\n", links)
	} else {
		fmt.Fprintln(w, "The tokens below are shown once and stored nowhere (the file keeps only their SHA-256; --links FILE keeps them as a CSV).")
	}
	fmt.Fprintln(w, "Send each LHA its own link over a trusted channel:")
	for i, l := range file.LHAs {
		fmt.Fprintf(w, "  %-20s %s/join#%s\n", l.Name, base, secrets.LHAs[i])
	}
	fmt.Fprintf(w, "Admin dashboard (keep secret): %s/admin#%s\n", base, secrets.Admin)
}

// helperFlags are study new's flags that name a helper.
type helperFlags struct{ url, key, operator, leader *string }

func addHelperFlags(fs *flag.FlagSet) helperFlags {
	return helperFlags{
		url:      fs.String("helper", "", "URL of the helper server for two-server secure aggregation (with --helper-key; docs/privacy.md)"),
		key:      fs.String("helper-key", "", "the helper's helper.pub (from 'fedcast helper keygen'; with --helper)"),
		operator: fs.String("helper-operator", "", "name of the organisation that runs the helper, shown to the LHAs (with --helper)"),
		leader:   fs.String("operator", "", "name of the organisation that runs this coordinator, shown to the LHAs beside the helper's (with --helper)"),
	}
}

// printHelper says that the study has a helper (nothing without one).
func printHelper(w io.Writer, h *study.HelperRef, eps float64) {
	if h != nil {
		fmt.Fprintf(w, "Secure aggregation: helper %s (key fingerprint %s); no single server sees an LHA's update. "+
			"Against the public the noise is about √2 times larger than without a helper (docs/privacy.md)\n", h.URL, h.Fingerprint)
		fmt.Fprintln(w, "The study file holds the secret leader token that shows the helper this coordinator is the study's: keep the file private (mode 0600).")
		fmt.Fprintf(w, "For the helper's operator (not secret): 'fedcast helper serve --allow-leader %s' serves this coordinator's studies and no one else's.\n",
			study.HashToken(h.LeaderToken))
		if eps > weakEpsilonAbove {
			fmt.Fprintf(w, "warning: a helper refuses a study above ε = %d unless its operator starts it with --max-epsilon %g or more; ask them first.\n", weakEpsilonAbove, eps)
		}
	}
}

// ref builds the study file's helper field from the flags (nil without
// --helper).
func (hf helperFlags) ref() (*study.HelperRef, error) {
	u, keyFile, operator, leader := *hf.url, *hf.key, *hf.operator, *hf.leader
	switch {
	case u == "" && keyFile == "" && operator == "" && leader == "":
		return nil, nil
	case u == "" || keyFile == "":
		return nil, usagef("e.g. --helper https://helper.example.org:8090 --helper-key helper.pub", "--helper and --helper-key go together")
	}
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("study new: --helper-key: %w", err)
	}
	pk, err := secagg.ParsePublicFile(keyFile, b)
	if err != nil {
		return nil, err
	}
	return &study.HelperRef{URL: u, PublicKey: pk.Bytes(), Fingerprint: pk.Fingerprint(), Operator: operator, LeaderOperator: leader}, nil
}
