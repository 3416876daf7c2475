package experiment

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// The tuning harness of the weekly design (docs/results.md, "Design over
// time"): a replay of a deployment week by week on the history file (or a
// year-long synthetic outbreak), campaigns every 28 days, the lifetime ε
// spread over every campaign of 2020-10-05 … 2021-06-21, scored by relative
// WIS against issue 24's hub baseline. Run it with
//
//	FEDCAST_TUNE_OVERTIME=1 go test ./coordinator/experiment -run TestTuneOverTime -v -timeout 2h
//
// FEDCAST_TUNE_VARIANTS (a regular expression) picks variants, FEDCAST_TUNE_EPS
// the ε list (default "2,inf"), FEDCAST_TUNE_SEED the noise seed (default 1),
// FEDCAST_TUNE_PERIOD "tune" (default), "heldout" or "synthetic".

// otData is the replay's input: every area's series and its public inputs.
type otData struct {
	areas []*series.Region
	pubs  []model.Public
}

// sumRegions returns the day-by-day sum of the regions (all start on the
// same day and have the same length).
func sumRegions(name string, rs []*series.Region) *series.Region {
	out := &series.Region{Name: name, Start: rs[0].Start, Cases: make([]float64, len(rs[0].Cases))}
	for _, r := range rs {
		for i, v := range r.Cases {
			out.Cases[i] += v
		}
	}
	return out
}

// publicInputs builds the national and state totals (sums of the areas)
// and each area's holidays; states[i] and pops[i] belong to areas[i].
func publicInputs(t testing.TB, areas []*series.Region, states []string, pops []float64) otData {
	byState := map[string][]*series.Region{}
	for i, r := range areas {
		byState[states[i]] = append(byState[states[i]], r)
	}
	national := sumRegions("national", areas)
	totals, hols := map[string]*series.Region{}, map[string]*model.Holidays{}
	for s, rs := range byState {
		totals[s] = sumRegions(s, rs)
		h, err := model.NewHolidays(s)
		if err != nil {
			h, _ = model.NewHolidays("") // synthetic compass states: no holidays
		}
		hols[s] = h
	}
	d := otData{areas: areas}
	for i := range areas {
		d.pubs = append(d.pubs, model.Public{National: national, State: totals[states[i]], Holidays: hols[states[i]], Population: pops[i]})
	}
	return d
}

func loadOverTimeHistory(t testing.TB) otData {
	dir := testkit.DataDir(t)
	d, err := series.ReadFile(filepath.Join(dir, "county_cases_2020-03_2021-06.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "counties.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	state, pop := map[string]string{}, map[string]float64{}
	for _, row := range rows[1:] {
		state[row[0]] = row[2]
		pop[row[0]], _ = strconv.ParseFloat(row[3], 64)
	}
	var states []string
	var pops []float64
	for _, r := range d.Regions {
		states, pops = append(states, state[r.Name]), append(pops, pop[r.Name])
	}
	return publicInputs(t, d.Regions, states, pops)
}

func synthOverTime(t testing.TB, seed uint64) otData {
	d, areas, err := synth.Generate(synth.Options{
		Areas: 400, Seed: seed, Start: day("2020-06-01"), Days: 365, InterventionDay: 150,
		TimingSpread: 10, DetectionDrift: 0.01, ReportingNoise: 0.2,
	})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	var pops []float64
	for _, a := range areas {
		states, pops = append(states, a.State), append(pops, a.Population)
	}
	return publicInputs(t, d.Regions, states, pops)
}

// otScore accumulates the scores of (origin, area) pairs.
type otScore struct {
	wis, base, ae, baseAE float64
	in50, in95, n         int
}

func (s *otScore) add(q, b forecast.Quantiles, y float64) {
	s.wis += forecast.WIS(q, y)
	s.base += forecast.WIS(b, y)
	s.ae += math.Abs(y - q.Median())
	s.baseAE += math.Abs(y - b.Median())
	if forecast.Covered(q, 0.5, y) {
		s.in50++
	}
	if forecast.Covered(q, 0.95, y) {
		s.in95++
	}
	s.n++
}

func (s otScore) String() string {
	n := float64(max(s.n, 1))
	return fmt.Sprintf("relWIS %.3f  relMAE %.3f  cov50 %.3f  cov95 %.3f  (n %d)",
		s.wis/s.base, s.ae/s.baseAE, float64(s.in50)/n, float64(s.in95)/n, s.n)
}

// hubBaseline returns issue 24's hub baseline for every area at origin t:
// median = the last 7-day total; the other quantiles add the empirical
// quantiles of no change's log errors at t−56, …, t−7 (7-day averages,
// pooled over areas) to the last 7-day average on the log scale.
func hubBaseline(d otData, t time.Time) []forecast.Quantiles {
	var errs []float64
	for k := 1; k <= 8; k++ {
		o := t.AddDate(0, 0, -7*k)
		for _, r := range d.areas {
			p, ok1 := model.Total7(r, o)
			y, ok2 := model.Total7(r, o.AddDate(0, 0, 7))
			if ok1 && ok2 {
				errs = append(errs, math.Log((y/7+1)/(p/7+1)))
			}
		}
	}
	sort.Float64s(errs)
	out := make([]forecast.Quantiles, len(d.areas))
	for i, r := range d.areas {
		p, _ := model.Total7(r, t)
		for j, tau := range forecast.Levels {
			e := 0.0
			if len(errs) > 0 {
				h := tau * float64(len(errs)-1)
				lo := int(h)
				e = errs[lo]
				if lo+1 < len(errs) {
					e += (h - float64(lo)) * (errs[lo+1] - errs[lo])
				}
			}
			out[i][j] = 7 * max(0, (p/7+1)*math.Exp(e)-1)
		}
		out[i][3] = p
		for j := 1; j < forecast.NumLevels; j++ {
			out[i][j] = max(out[i][j], out[i][j-1])
		}
	}
	return out
}

// otRun is one replay: the design, its ranges, the lifetime ε, the noise
// seed, the replay's schedule (from, to: the period whose campaigns share
// the budget) and the origins scored.
type otRun struct {
	design             model.Design
	calib              forecast.Calibrator
	eps                float64
	seed               uint64
	from, to           time.Time
	scoreFrom, scoreTo time.Time
}

const otEvery = 28 // days between campaigns

// replayOverTime runs the campaigns of r that start by r.scoreTo and scores
// the weekly origins in r.scoreFrom … r.scoreTo.
func replayOverTime(t testing.TB, d otData, r otRun) otScore {
	des := r.design
	campaigns := int(r.to.Sub(r.from).Hours()/24)/otEvery + 1
	N := len(d.areas)
	cfg := fl.Config{Clients: N, ExpectedClients: des.ExpectedClients(N), Rounds: des.Rounds, ClipNorm: des.Clip,
		LocalEpochs: des.LocalEpochs, LearningRate: des.LearningRate, DP: !math.IsInf(r.eps, 1)}
	if cfg.DP {
		c, err := privacy.NoiseMultiplier(r.eps, 1e-5, cfg.SampleRate(), campaigns*des.Rounds)
		if err != nil {
			t.Fatal(err)
		}
		cfg.NoiseMultiplier = c
	}
	m := des.Network()
	global := make([]float64, m.NumParams())
	des.Init(m, global, fl.NewRand(r.seed, fl.StreamInit))
	var score otScore
	for c := range campaigns {
		start := r.from.AddDate(0, 0, c*otEvery)
		if start.After(r.scoreTo) {
			break
		}
		clients := make([]fl.ClientData, N)
		for i, a := range d.areas {
			clients[i].X, clients[i].Y = des.Weekly.Windows(a, d.pubs[i], start)
		}
		sim := &fl.Simulation{Model: m, Initial: global, Config: cfg, Clients: clients, Epsilon: r.eps, Delta: 1e-5,
			Seed: r.seed*1000 + uint64(c), Workers: 2}
		if !cfg.DP {
			sim.Epsilon = math.Inf(1)
		}
		srv, err := sim.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		global = srv.Global
		f := forecast.WeeklyForecaster{Design: des, Model: m, Params: global, Calib: r.calib}
		for k := 0; k < otEvery; k += 7 {
			o := start.AddDate(0, 0, k)
			if o.Before(r.scoreFrom) || o.After(r.scoreTo) {
				continue
			}
			base := hubBaseline(d, o)
			for i, a := range d.areas {
				y, ok := model.Total7(a, o.AddDate(0, 0, 7))
				if !ok {
					continue
				}
				score.add(f.Forecast(a, d.pubs[i], o), base[i], y)
			}
		}
	}
	return score
}

type otVariant struct {
	name string
	set  func(*model.Design, *forecast.Calibrator)
}

func weekly(f func(*model.Weekly)) func(*model.Design, *forecast.Calibrator) {
	return func(d *model.Design, _ *forecast.Calibrator) { f(d.Weekly) }
}

// otVariants are the variants of docs/results.md's table, in its order.
var otVariants = []otVariant{
	{"own", weekly(func(w *model.Weekly) { w.Totals, w.Holidays = false, false })},
	{"totals", weekly(func(w *model.Weekly) { w.Holidays = false })},
	{"full", func(*model.Design, *forecast.Calibrator) {}},
	{"full-26", weekly(func(w *model.Weekly) { w.HistoryWeeks = 26 })},
	{"full-h16", func(d *model.Design, _ *forecast.Calibrator) { d.Hidden = []int{16} }},
	{"full-lin", func(d *model.Design, _ *forecast.Calibrator) { d.Hidden = nil }},
	{"full-k2", weekly(func(w *model.Weekly) { w.Weeks = 2 })},
	{"full-k6", weekly(func(w *model.Weekly) { w.Weeks = 6 })},
	{"full-lr", func(d *model.Design, _ *forecast.Calibrator) { d.LearningRate = 0.01 }},
	{"full-d1", func(d *model.Design, _ *forecast.Calibrator) { d.Damping = 1 }},
	{"full-L56", func(_ *model.Design, c *forecast.Calibrator) { c.Lookback = 56 }},
}

func TestTuneOverTime(t *testing.T) {
	if os.Getenv("FEDCAST_TUNE_OVERTIME") == "" {
		t.Skip("the weekly design's tuning harness: set FEDCAST_TUNE_OVERTIME=1 (minutes per variant)")
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
	run := otRun{seed: seed, from: day("2020-10-05"), to: day("2021-06-21"), scoreFrom: day("2020-10-05"), scoreTo: day("2021-01-25")}
	var d otData
	switch p := cmpOr(os.Getenv("FEDCAST_TUNE_PERIOD"), "tune"); p {
	case "tune":
		d = loadOverTimeHistory(t)
	case "heldout":
		d = loadOverTimeHistory(t)
		run.scoreFrom, run.scoreTo = day("2021-02-01"), day("2021-06-21")
	case "synthetic":
		d = synthOverTime(t, 41)
		run.from, run.to = day("2021-01-04"), day("2021-05-24")
		run.scoreFrom, run.scoreTo = run.from, run.to
	default:
		t.Fatalf("FEDCAST_TUNE_PERIOD %q (want tune, heldout or synthetic)", p)
	}
	for _, v := range otVariants {
		if !re.MatchString(v.name) {
			continue
		}
		for _, eps := range epsilons {
			r := run
			r.design, r.calib, r.eps = model.WeeklyDesign, forecast.WeeklyCalibrator(), eps
			r.design = cloneDesign(r.design)
			v.set(&r.design, &r.calib)
			start := time.Now()
			s := replayOverTime(t, d, r)
			t.Logf("%-9s ε=%-4v %s  params %d  %.0fs", v.name, eps, s, r.design.Network().NumParams(), time.Since(start).Seconds())
		}
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func cloneDesign(d model.Design) model.Design {
	d.Hidden = append([]int(nil), d.Hidden...)
	w := *d.Weekly
	d.Weekly = &w
	return d
}
