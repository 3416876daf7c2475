package experiment

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

// The fourth round's harness of the weekly design (docs/results.md, "Design
// over time", fourth round): each variant replayed by `fedcast backtest`'s
// replay on the history file from 2020-05-04 (15 campaigns, lifetime ε = 2)
// for each noise seed, scored on the choosing origins 2020-05-04 …
// 2021-01-25 only, overall and per quarter. Run it with
//
//	GOEXPERIMENT=simd FEDCAST_TUNE_SKILL=1 go test ./coordinator/experiment -run TestTuneSkill -v -timeout 1h
//
// FEDCAST_TUNE_SKILL_VARIANTS is a comma-separated list of variants (default
// all of skillVariants); "a+b" applies a and b together. FEDCAST_TUNE_SEEDS
// the noise seeds (default 1,2), FEDCAST_TUNE_EPS one ε (default 2),
// FEDCAST_TUNE_PERIOD "history" (default) or "synthetic" (the synthetic
// check: one 400-area outbreak, every origin of its replay scored),
// FEDCAST_TUNE_STARTS the replays' start dates on the history file
// (tuneStarts; default 2020-05-04). The held-out origins (2021-02-01 on)
// are never scored here.

// skillVariants are the fourth round's variants, each one change from the
// weekly design.
var skillVariants = map[string]otVariant{
	"weekly":  {"weekly", func(*model.Design) {}, nil},
	"ens2":    {"ens2", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.Ensemble = 2 }},
	"ens3":    {"ens3", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.Ensemble = 3 }},
	"blend84": {"blend84", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.Blend, w.BlendDays = true, 84 }},
	"ramp":    {"ramp", func(*model.Design) {}, func(w *backtest.WeeklyDesign) { w.RampWeeks = 26 }},
	"tclip":   {"tclip", weekly(func(w *model.Weekly) { w.ClipTarget = 0.5 }), nil},
	"l1":      {"l1", weekly(func(w *model.Weekly) { w.Loss = "absolute" }), nil},
	// The fifth round's, each one change from the weekly design as the
	// fourth round left it (absolute error).
	"d07":     {"d07", func(d *model.Design) { d.Damping = 0.7 }, nil},
	"d1":      {"d1", func(d *model.Design) { d.Damping = 1 }, nil},
	"lr003":   {"lr003", func(d *model.Design) { d.LearningRate = 0.003 }, nil},
	"pers30":  {"pers30", weekly(func(w *model.Weekly) { w.PersonalSteps = 30 }), nil},
	"pers100": {"pers100", weekly(func(w *model.Weekly) { w.PersonalSteps = 100 }), nil},
	"L56":     {"L56", func(*model.Design) {}, calibLookback(56)},
	// The sixth round's.
	"pers30r":    {"pers30r", weekly(func(w *model.Weekly) { w.PersonalSteps, w.PersonalReleasedErrors = 30, true }), nil},
	"pers30-L56": {"pers30-L56", weekly(func(w *model.Weekly) { w.PersonalSteps = 30 }), calibLookback(56)},
}

// skillOrder lists the fourth round's variants (the default of
// FEDCAST_TUNE_SKILL_VARIANTS); the fifth round ran
// weekly,d07,d1,lr003,pers30,pers100,L56, the sixth pers30r,pers30-L56.
const skillOrder = "weekly,ens2,ens3,blend84,ramp,tclip,l1"

// skillVariant returns the variant "a+b+…" of skillVariants.
func skillVariant(t *testing.T, name string) (set func(*model.Design), setW func(*backtest.WeeklyDesign)) {
	var parts []otVariant
	for _, n := range strings.Split(name, "+") {
		v, ok := skillVariants[n]
		if !ok {
			t.Fatalf("FEDCAST_TUNE_SKILL_VARIANTS: unknown variant %q (want some of %s)", n, skillOrder)
		}
		parts = append(parts, v)
	}
	set = func(d *model.Design) {
		for _, v := range parts {
			v.set(d)
		}
	}
	setW = func(w *backtest.WeeklyDesign) {
		for _, v := range parts {
			if v.setW != nil {
				v.setW(w)
			}
		}
	}
	return set, setW
}

// skillPeriods are the choosing origins' quarters (2021Q1: January only).
var skillPeriods = []struct{ name, from, to string }{
	{"2020Q2", "2020-04-01", "2020-06-30"},
	{"2020Q3", "2020-07-01", "2020-09-30"},
	{"2020Q4", "2020-10-01", "2020-12-31"},
	{"2021Q1", "2021-01-01", "2021-01-31"},
}

// envSeeds returns FEDCAST_TUNE_SEEDS's noise seeds (def when unset).
func envSeeds(t *testing.T, def string) []uint64 {
	var seeds []uint64
	for _, s := range strings.Split(cmpOr(os.Getenv("FEDCAST_TUNE_SEEDS"), def), ",") {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FEDCAST_TUNE_SEEDS: %v", err)
		}
		seeds = append(seeds, v)
	}
	return seeds
}

// tuneStart is one replay start date of a tuning round: the replay's
// first origin (and first campaign) and the last origin scored.
type tuneStart struct{ from, last time.Time }

// lastChoosing is the last origin any tuning round scores on the history
// file: the origins after it (2021-02-01 … 2021-06-21) are held out.
const lastChoosing = "2021-01-25"

// tuneStarts returns the replays of a round: on the history file one per
// date of FEDCAST_TUNE_STARTS (default 2020-05-04, the fourth to eighth
// rounds'; the ninth ran 2020-05-04,2020-10-05), each scored on its own
// origins up to lastChoosing only; on the synthetic check, its one replay
// (from … to, every origin scored).
func tuneStarts(t *testing.T, period string, from, to time.Time) []tuneStart {
	if period != "history" {
		return []tuneStart{{from, to}}
	}
	var out []tuneStart
	for _, s := range strings.Split(cmpOr(os.Getenv("FEDCAST_TUNE_STARTS"), "2020-05-04"), ",") {
		f, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatalf("FEDCAST_TUNE_STARTS: %q is not a date (YYYY-MM-DD)", s)
		}
		if !f.Before(day(lastChoosing)) {
			t.Fatalf("FEDCAST_TUNE_STARTS: %s is not before %s: it would have no choosing origin", s, lastChoosing)
		}
		out = append(out, tuneStart{f, day(lastChoosing)})
	}
	return out
}

// skillScores scores res on the choosing origins from … last and, with
// perQuarter, on each of skillPeriods: the overall scores, the quarters'
// relative WIS as " | 2020Q2 0.914 …" and the worst of them.
func skillScores(t *testing.T, res *backtest.Result, d *series.Dataset, from, last time.Time, perQuarter bool) (s backtest.Scores, quarters string, worst float64) {
	s = otScores(t, res, d, from, last)
	if !perQuarter {
		return s, "", 0
	}
	for _, q := range skillPeriods {
		qf, qt := maxTime(from, day(q.from)), minTime(last, day(q.to))
		if qt.Before(qf) {
			continue // a quarter before the replay's start
		}
		qs := otScores(t, res, d, qf, qt)
		quarters += fmt.Sprintf(" | %s %.3f", q.name, qs.RelativeWIS)
		worst = max(worst, qs.RelativeWIS)
	}
	return s, quarters, worst
}

func TestTuneSkill(t *testing.T) {
	if os.Getenv("FEDCAST_TUNE_SKILL") == "" {
		t.Skip("the weekly design's fourth tuning round: set FEDCAST_TUNE_SKILL=1 (seconds per replay with GOEXPERIMENT=simd)")
	}
	eps, err := strconv.ParseFloat(cmpOr(os.Getenv("FEDCAST_TUNE_EPS"), "2"), 64)
	if err != nil {
		t.Fatal(err)
	}
	seeds := envSeeds(t, "1,2")
	period := cmpOr(os.Getenv("FEDCAST_TUNE_PERIOD"), "history")
	d, state, pop, from, to := otInput(t, period)
	for _, name := range strings.Split(cmpOr(os.Getenv("FEDCAST_TUNE_SKILL_VARIANTS"), skillOrder), ",") {
		set, setW := skillVariant(t, name)
		for _, st := range tuneStarts(t, period, from, to) {
			var wis, c95, worst float64
			for _, seed := range seeds {
				des, _ := model.ReplayPreset("weekly")
				set(&des)
				wd, err := backtest.NewWeeklyDesign(des, seed)
				if err != nil {
					t.Fatal(err)
				}
				setW(wd)
				res, err := backtest.Run(backtest.Options{Cases: d, AreaState: state, Population: pop, From: st.from, To: to,
					Epsilon: eps, Delta: 1e-5, Design: wd, Seed: &seed})
				if err != nil {
					t.Fatal(err)
				}
				s, quarters, w := skillScores(t, res, d, st.from, st.last, period == "history")
				t.Logf("%-14s from %s seed %d %3.0f s  choosing %s%s", name, st.from.Format(time.DateOnly), seed, res.Seconds, otLine(s), quarters)
				n := float64(len(seeds))
				wis, c95, worst = wis+s.RelativeWIS/n, c95+s.Coverage95/n, worst+w/n
			}
			t.Logf("%-14s from %s mean of %d seeds: relWIS %.4f cov95 %.3f worst quarter %.3f", name, st.from.Format(time.DateOnly), len(seeds), wis, c95, worst)
		}
	}
}

// TestTuneStarts: every start date of FEDCAST_TUNE_STARTS is scored only up
// to the last choosing origin (the held-out origins stay unscored), the
// default is the May start alone, and the synthetic check keeps its own
// span.
func TestTuneStarts(t *testing.T) {
	t.Setenv("FEDCAST_TUNE_STARTS", "2020-05-04,2020-10-05")
	got := tuneStarts(t, "history", day("2020-10-05"), day("2021-06-21"))
	if len(got) != 2 || !got[0].from.Equal(day("2020-05-04")) || !got[1].from.Equal(day("2020-10-05")) {
		t.Fatalf("starts %v, want 2020-05-04 and 2020-10-05", got)
	}
	for _, s := range got {
		if !s.last.Equal(day(lastChoosing)) {
			t.Errorf("start %v is scored up to %v, want %s", s.from, s.last, lastChoosing)
		}
	}
	t.Setenv("FEDCAST_TUNE_STARTS", "")
	if got := tuneStarts(t, "history", day("2020-10-05"), day("2021-06-21")); len(got) != 1 || !got[0].from.Equal(day("2020-05-04")) {
		t.Errorf("default starts %v, want 2020-05-04 only", got)
	}
	if got := tuneStarts(t, "synthetic", day("2021-01-04"), day("2021-05-24")); len(got) != 1 || !got[0].last.Equal(day("2021-05-24")) {
		t.Errorf("synthetic starts %v, want its own span", got)
	}
}
