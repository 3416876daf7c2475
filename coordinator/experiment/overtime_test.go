package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// The tuning harness of the weekly design (docs/results.md, "Design over
// time"): `fedcast backtest`'s replay (coordinator/backtest) of each
// variant on the history file 2020-10-05 … 2021-06-21 (or on a year-long
// synthetic outbreak), scored against issue 24's hub baseline separately
// on the tuning origins (… 2021-01-25) and the held-out ones. Run it with
//
//	FEDCAST_TUNE_OVERTIME=1 go test ./coordinator/experiment -run TestTuneOverTime -v -timeout 2h
//
// FEDCAST_TUNE_VARIANTS (a regular expression) picks variants, FEDCAST_TUNE_EPS
// the ε list (default "2,inf"), FEDCAST_TUNE_SEED the noise seed (default 1),
// FEDCAST_TUNE_PERIOD "history" (default) or "synthetic", FEDCAST_TUNE_FROM
// an earlier first origin (the third round: 2020-05-04, whose 2020Q3 is
// then scored alone too);
// FEDCAST_TUNE_HELDOUT=1 also prints the held-out origins' scores (by
// default only the tuning origins' are shown, so that a round of tuning
// cannot peek at them). The rule's grid
// of docs/results.md was run with this harness's first version (commit
// b17dd62), which replayed the same schedule with its own loop; "full-L56"
// (ranges from 56 days) is not a variant of the design's adaptor.

type otVariant struct {
	name string
	set  func(*model.Design)
	// setW, when set, changes the adaptor's ranges or median instead.
	setW func(*backtest.WeeklyDesign)
}

func calibLookback(days int) func(*backtest.WeeklyDesign) {
	return func(w *backtest.WeeklyDesign) {
		c := forecast.WeeklyCalibrator()
		c.Lookback = days
		w.Calib = &c
	}
}

func weekly(f func(*model.Weekly)) func(*model.Design) {
	return func(d *model.Design) { f(d.Weekly) }
}

// otVariants are the variants of docs/results.md's table, in its order.
var otVariants = []otVariant{
	{"own", weekly(func(w *model.Weekly) { w.Totals, w.Holidays = false, false }), nil},
	{"totals", weekly(func(w *model.Weekly) { w.Holidays = false }), nil},
	{"full", func(*model.Design) {}, nil},
	{"full-26", weekly(func(w *model.Weekly) { w.HistoryWeeks = 26 }), nil},
	{"full-h16", func(d *model.Design) { d.Hidden = []int{16} }, nil},
	{"full-lin", func(d *model.Design) { d.Hidden = nil }, nil},
	{"full-k2", weekly(func(w *model.Weekly) { w.Weeks = 2 }), nil},
	{"full-k6", weekly(func(w *model.Weekly) { w.Weeks = 6 }), nil},
	{"full-lr", func(d *model.Design) { d.LearningRate = 0.01 }, nil},
	{"full-d1", func(d *model.Design) { d.Damping = 1 }, nil},
	// The second round's (docs/results.md), each one change from the
	// weekly design.
	{"d03", func(d *model.Design) { d.Damping = 0.3 }, nil},
	{"d07", func(d *model.Design) { d.Damping = 0.7 }, nil},
	{"lr003", func(d *model.Design) { d.LearningRate = 0.003 }, nil},
	{"T10", func(d *model.Design) { d.Rounds = 10 }, nil},
	{"h64", func(d *model.Design) { d.Hidden = []int{64} }, nil},
	{"s1", weekly(func(w *model.Weekly) { w.Stride = 1 }), nil},
	{"k3", weekly(func(w *model.Weekly) { w.Weeks = 3 }), nil},
	{"nolevel", weekly(func(w *model.Weekly) { w.NoLevel = true }), nil},
	{"size", weekly(func(w *model.Weekly) { w.Size = true }), nil},
	{"min20", weekly(func(w *model.Weekly) { w.MinTotal = 20 }), nil},
	// The third round's (docs/results.md), each one change from the
	// weekly design; "weekly" is the design itself.
	{"weekly", func(*model.Design) {}, nil},
	{"L56", func(*model.Design) {}, calibLookback(56)},
	{"L84", func(*model.Design) {}, calibLookback(84)},
	{"pois", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.Poisson = 1 }},
	{"blend", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.Blend = true }},
	{"h56", func(d *model.Design) { d.Hidden = []int{56} }, nil},
}

// otInput is a replay's data: the cases and the public metadata.
func otInput(t *testing.T, period string) (d *series.Dataset, state map[string]string, pop map[string]float64, from, to time.Time) {
	switch period {
	case "history":
		dir := testkit.DataDir(t)
		d, err := series.ReadFile(filepath.Join(dir, "county_cases_2020-03_2021-06.csv"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := backtest.ReadCounties(filepath.Join(dir, "counties.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return d, c.State, c.Population, day("2020-10-05"), day("2021-06-21")
	case "synthetic":
		d, areas, err := synth.Generate(synth.Options{Areas: 400, Seed: 41, Start: day("2020-06-01"), Days: 365,
			InterventionDay: 150, TimingSpread: 10, DetectionDrift: 0.01, ReportingNoise: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		pop := map[string]float64{}
		for _, a := range areas {
			pop[a.ID] = a.Population // compass states: no holiday calendar, no state totals
		}
		return d, nil, pop, day("2021-01-04"), day("2021-05-24")
	}
	t.Fatalf("FEDCAST_TUNE_PERIOD %q (want history or synthetic)", period)
	return
}

// otScores scores the origins of res in from … to.
func otScores(t *testing.T, res *backtest.Result, d *series.Dataset, from, to time.Time) backtest.Scores {
	sub := *res
	sub.Origins, sub.Forecasts, sub.EpsilonAt = nil, nil, nil
	for i, o := range res.Origins {
		if !o.Before(from) && !o.After(to) {
			sub.Origins = append(sub.Origins, o)
			sub.Forecasts = append(sub.Forecasts, res.Forecasts[i])
			sub.EpsilonAt = append(sub.EpsilonAt, res.EpsilonAt[i])
		}
	}
	s, err := backtest.Score(&sub, d)
	if err != nil {
		t.Fatal(err)
	}
	return s.All
}

func otLine(s backtest.Scores) string {
	return fmt.Sprintf("relWIS %.3f relMAE %.3f cov50 %.3f cov95 %.3f", s.RelativeWIS, s.RelativeMAE, s.Coverage50, s.Coverage95)
}

func TestTuneOverTime(t *testing.T) {
	if os.Getenv("FEDCAST_TUNE_OVERTIME") == "" {
		t.Skip("the weekly design's tuning harness: set FEDCAST_TUNE_OVERTIME=1 (about a minute per variant and ε)")
	}
	re := regexp.MustCompile(cmpOr(os.Getenv("FEDCAST_TUNE_VARIANTS"), "."))
	var epsilons []float64
	for _, s := range strings.Split(cmpOr(os.Getenv("FEDCAST_TUNE_EPS"), "2,inf"), ",") {
		e, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		epsilons = append(epsilons, e)
	}
	seed, _ := strconv.ParseUint(cmpOr(os.Getenv("FEDCAST_TUNE_SEED"), "1"), 10, 64)
	d, state, pop, from, to := otInput(t, cmpOr(os.Getenv("FEDCAST_TUNE_PERIOD"), "history"))
	if f := os.Getenv("FEDCAST_TUNE_FROM"); f != "" {
		from = day(f) // the third round: 2020-05-04
	}
	split := day("2021-01-25")
	q3from, q3to := day("2020-07-06"), day("2020-09-28")
	for _, v := range otVariants {
		if !re.MatchString(v.name) {
			continue
		}
		des, _ := model.ReplayPreset("weekly")
		v.set(&des)
		for _, eps := range epsilons {
			wd, err := backtest.NewWeeklyDesign(des, seed)
			if err != nil {
				t.Fatal(err)
			}
			if v.setW != nil {
				v.setW(wd)
			}
			res, err := backtest.Run(backtest.Options{Cases: d, AreaState: state, Population: pop, From: from, To: to,
				Epsilon: eps, Delta: 1e-5, Design: wd, Seed: &seed})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-8s ε=%-4v %4d params %3.0f s  tuning %s", v.name, eps, des.Network().NumParams(), res.Seconds,
				otLine(otScores(t, res, d, from, split)))
			if !from.After(q3from) {
				t.Logf("  2020Q3   %s", otLine(otScores(t, res, d, q3from, q3to)))
			}
			if os.Getenv("FEDCAST_TUNE_HELDOUT") != "" {
				t.Logf("  held-out %s\n  all      %s", otLine(otScores(t, res, d, split.AddDate(0, 0, 1), to)),
					otLine(otScores(t, res, d, from, to)))
			}
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
