package backtest

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// fixture is a small synthetic outbreak: n areas with ids "01001", …
// (leading zeros), two states, 2020-06-01 … 2020-10-31.
func fixture(t testing.TB, n int) (*series.Dataset, map[string]string) {
	t.Helper()
	d, _, err := synth.Generate(synth.Options{Areas: n, Start: day("2020-06-01"), Days: 153, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for i, r := range d.Regions {
		r.Name = fmt.Sprintf("%02d%03d", 1+i%2, i+1)
		states[r.Name] = []string{"Nord", "Süd"}[i%2]
	}
	slices.SortFunc(d.Regions, func(a, b *series.Region) int {
		return map[bool]int{true: -1, false: 1}[a.Name < b.Name]
	})
	return d, states
}

func baseOptions(d *series.Dataset, states map[string]string, eps float64) Options {
	seed := uint64(5)
	return Options{Cases: d, AreaState: states, From: day("2020-08-03"), To: day("2020-10-12"),
		Epsilon: eps, Delta: 1e-5, Every: 28, Design: NewStudyDesign(model.Default, 1), Seed: &seed, Workers: 2}
}

// TestHubFilesReadBack writes the hub files of a replay and reads them
// back: the contract's columns in order, target, horizon, dates, the seven
// levels, every area at every origin, ids with their leading zeros.
func TestHubFilesReadBack(t *testing.T) {
	d, states := fixture(t, 6)
	res, err := Run(baseOptions(d, states, 2))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := WriteHub(dir, "default", res)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(res.Origins) || len(res.Origins) != 11 {
		t.Fatalf("%d files for %d origins, want 11", len(files), len(res.Origins))
	}
	for o, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("reference_date,target,horizon,target_end_date,location,output_type,output_type_id,value\n")) {
			t.Fatalf("%s: header %q", f, b[:80])
		}
		if filepath.Dir(f) != dir {
			t.Errorf("%s is not directly in %s", f, dir)
		}
		origin, qs, err := ReadHubFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !origin.Equal(res.Origins[o]) {
			t.Errorf("%s: origin %s, want %s", f, origin, res.Origins[o])
		}
		if rows := bytes.Count(b, []byte("\n")) - 1; rows != 7*len(d.Regions) {
			t.Errorf("%s: %d rows, want 7 per area", f, rows)
		}
		for _, r := range d.Regions {
			q, ok := qs[r.Name]
			if !ok {
				t.Fatalf("%s: no rows for area %q (leading zeros kept?)", f, r.Name)
			}
			want := res.Forecasts[o][slices.Index(res.Areas, r.Name)]
			close := true
			for i := range q {
				close = close && math.Abs(q[i]-want[i]) <= 5e-4
			}
			if !q.Valid() || !close {
				t.Errorf("%s: area %s read back %v", f, r.Name, q)
			}
		}
	}
	if !bytes.Contains(must(os.ReadFile(files[0])), []byte(",wk inc case,1,2020-08-10,01001,quantile,0.025,")) {
		t.Error("the first file has no row for area 01001 at level 0.025 with target_end_date origin+7")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestReadHubFileRejects checks the reader a second scorer would rely on.
func TestReadHubFileRejects(t *testing.T) {
	good := "reference_date,target,horizon,target_end_date,location,output_type,output_type_id,value\n"
	row := func(level, v string) string {
		return "2020-08-03,wk inc case,1,2020-08-10,01001,quantile," + level + "," + v + "\n"
	}
	all := ""
	for _, l := range forecast.LevelStrings {
		all += row(l, "3")
	}
	if _, qs, err := ReadHubFile(bytes.NewReader([]byte(good + all))); err != nil || qs["01001"][6] != 3 {
		t.Fatalf("a complete file: %v %v", qs, err)
	}
	for name, body := range map[string]string{
		"missing level": good + all[len(row("0.025", "3")):],
		"twice":         good + all + row("0.5", "3"),
		"bad target":    good + "2020-08-03,7d avg inc case,1,2020-08-10,01001,quantile,0.5,3\n",
		"bad end date":  good + "2020-08-03,wk inc case,1,2020-08-11,01001,quantile,0.5,3\n",
		"negative":      good + row("0.5", "-1"),
		"columns":       "reference_date,target\n",
	} {
		if _, _, err := ReadHubFile(bytes.NewReader([]byte(body))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLifetimeBudget: whatever the schedule, the lifetime ε composed over
// every committed round of every campaign never exceeds the budget, and
// the planned schedule spends it (within the calibration's tolerance).
func TestLifetimeBudget(t *testing.T) {
	for _, c := range []struct {
		eps                  float64
		every, rounds, first int
		to                   string
	}{{1, 28, 0, 0, "2020-10-12"}, {2, 14, 2, 0, "2020-10-12"}, {0.5, 7, 1, 0, "2020-09-07"}, {8, 28, 3, 0, "2020-08-03"},
		// A warm start: the first campaign runs more rounds, the noise is
		// calibrated over all of them.
		{2, 14, 2, 7, "2020-10-12"}, {1, 28, 0, 12, "2020-10-12"}, {0.5, 7, 1, 3, "2020-08-10"}} {
		d, states := fixture(t, 4)
		o := baseOptions(d, states, c.eps)
		o.Every, o.Rounds, o.FirstRounds, o.To = c.every, c.rounds, c.first, day(c.to)
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(CampaignStarts(o.From, o.To, c.every)); len(res.Campaigns) != want {
			t.Fatalf("%+v: %d campaigns, want %d", c, len(res.Campaigns), want)
		}
		rounds := c.rounds
		if rounds == 0 {
			rounds = o.Design.Recipe().Rounds
		}
		prev := 0.0
		for k, cp := range res.Campaigns {
			want := rounds
			if k == 0 && c.first > 0 {
				want = c.first
			}
			if cp.Rounds != want {
				t.Errorf("%+v: campaign %d ran %d rounds, want %d", c, k+1, cp.Rounds, want)
			}
			if cp.Epsilon > c.eps || cp.Epsilon < prev {
				t.Errorf("%+v: after campaign %d the lifetime ε is %v (budget %v, before %v)", c, k+1, cp.Epsilon, c.eps, prev)
			}
			prev = cp.Epsilon
		}
		if got := res.EpsilonSpent(); got < 0.98*c.eps {
			t.Errorf("%+v: spent %v of %v: the schedule wastes budget", c, got, c.eps)
		}
		for o, e := range res.EpsilonAt {
			if e > c.eps {
				t.Errorf("origin %d: ε %v over the budget", o, e)
			}
		}
	}
}

// TestNoNoiseBudget: ε = ∞ runs without noise and says so.
func TestNoNoiseBudget(t *testing.T) {
	d, states := fixture(t, 4)
	o := baseOptions(d, states, math.Inf(1))
	o.To = day("2020-08-31")
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Schedule.NoiseMultiplier != 0 || !math.IsInf(res.EpsilonSpent(), 1) {
		t.Errorf("c = %v, ε spent %v", res.Schedule.NoiseMultiplier, res.EpsilonSpent())
	}
}

// spy wraps a design and checks, at every call, what it was handed.
type spy struct {
	Design
	mu    sync.Mutex
	fail  []string
	calls int
	// train, when false, makes every LHA send a zero update.
	train bool
}

func (s *spy) check(what string, own *series.Dataset, pub *forecast.PublicInputs, full *series.Dataset) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(own.Regions) != 1 {
		s.fail = append(s.fail, fmt.Sprintf("%s: handed %d areas", what, len(own.Regions)))
		return
	}
	r := own.Regions[0]
	if r.End().After(pub.Known) || len(pub.National) != int(pub.Known.Sub(pub.Start).Hours()/24)+1 {
		s.fail = append(s.fail, fmt.Sprintf("%s: own data to %s, public to %s (%d days)", what, r.End(), pub.Known, len(pub.National)))
	}
	for _, st := range pub.States {
		if len(st) != len(pub.National) {
			s.fail = append(s.fail, what+": a state total reaches past the known day")
		}
	}
	if full.Region(r.Name) == nil || !r.End().Equal(pub.Known) && full.Region(r.Name).End().After(pub.Known) {
		s.fail = append(s.fail, fmt.Sprintf("%s: area %s cut at %s, not at the known day %s", what, r.Name, r.End(), pub.Known))
	}
}

// TestEachLHAAlone: every call of the design gets exactly one area, cut at
// the day it acts, and public totals cut at the same day.
func TestEachLHAAlone(t *testing.T) {
	d, states := fixture(t, 4)
	o := baseOptions(d, states, 2)
	s := &spy{Design: o.Design, train: true}
	o.Design = &checking{spy: s, full: d}
	if _, err := Run(o); err != nil {
		t.Fatal(err)
	}
	if s.calls == 0 || len(s.fail) > 0 {
		t.Fatalf("%d calls; %v", s.calls, s.fail)
	}
}

// checking routes the design's calls through the spy.
type checking struct {
	*spy
	full *series.Dataset
}

func (c *checking) Training(own *series.Dataset, pub *forecast.PublicInputs) ([]float64, []float64, error) {
	c.check("training", own, pub, c.full)
	if !c.train {
		return nil, nil, nil
	}
	return c.Design.Training(own, pub)
}

func (c *checking) Forecast(params []float64, own *series.Dataset, pub *forecast.PublicInputs) ([]forecast.Quantiles, error) {
	c.check("forecast", own, pub, c.full)
	return c.Design.Forecast(params, own, pub)
}

// TestNoPooling: without training (every update zero, so the released
// model carries nothing), changing one area's counts leaves every other
// area's forecasts exactly as they were: no forecast reads another area's
// data except through the public totals (which today's design does not
// read).
func TestNoPooling(t *testing.T) {
	d, states := fixture(t, 4)
	run := func(d *series.Dataset) *Result {
		o := baseOptions(d, states, 2)
		o.Design = &checking{spy: &spy{Design: o.Design}, full: d}
		res, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	before := run(d)
	changed := clone(d)
	for i := range changed.Regions[1].Cases {
		changed.Regions[1].Cases[i] = changed.Regions[1].Cases[i]*3 + 50
	}
	after := run(changed)
	for o := range before.Origins {
		for a := range before.Areas {
			same := before.Forecasts[o][a] == after.Forecasts[o][a]
			if a == 1 && same {
				t.Errorf("origin %d: area %s's forecast ignores its own data", o, before.Areas[a])
			}
			if a != 1 && !same {
				t.Errorf("origin %d: area %s's forecast changed with another area's data", o, before.Areas[a])
			}
		}
	}
}

func clone(d *series.Dataset) *series.Dataset {
	out := &series.Dataset{}
	for _, r := range d.Regions {
		out.Regions = append(out.Regions, &series.Region{Name: r.Name, Start: r.Start, Cases: slices.Clone(r.Cases)})
	}
	return out
}

// TestNoLookAhead plants a spike after the second campaign's start and
// after an origin: every campaign that started before it and every
// forecast made before it are exactly as without the spike, and the
// forecasts after it see it.
func TestNoLookAhead(t *testing.T) {
	d, states := fixture(t, 4)
	o := baseOptions(d, states, 2)
	before, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	spike := day("2020-09-02") // after the campaign of 2020-08-31 and the origin 2020-08-31
	planted := clone(d)
	for _, r := range planted.Regions {
		i := r.Index(spike)
		for j := i; j < len(r.Cases); j++ {
			r.Cases[j] += 5000
		}
	}
	o.Cases = planted
	after, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	changedAfter := false
	for i, t0 := range before.Origins {
		same := slices.Equal(before.Forecasts[i], after.Forecasts[i])
		if t0.Before(spike) && !same {
			t.Errorf("origin %s (before the spike) changed", t0.Format(time.DateOnly))
		}
		if !t0.Before(spike) && !same {
			changedAfter = true
		}
	}
	if !changedAfter {
		t.Error("no forecast after the spike changed: the test plants nothing")
	}
	for k, c := range before.Campaigns {
		same := c.ModelSHA256 == after.Campaigns[k].ModelSHA256
		if c.Start.Before(spike) != same {
			t.Errorf("campaign %d (start %s): model unchanged %v with a spike on %s", k+1, c.Start.Format(time.DateOnly), same, spike.Format(time.DateOnly))
		}
	}
}

// TestBaselineAndScores checks the hub baseline and the scores on a hand
// example.
func TestBaselineAndScores(t *testing.T) {
	r := &series.Region{Name: "01001", Start: day("2020-01-01"), Cases: make([]float64, 120)}
	for i := range r.Cases {
		r.Cases[i] = 10
	}
	d := &series.Dataset{Regions: []*series.Region{r}}
	t0 := day("2020-03-31")
	errs := BaselineErrors(d, t0)
	if len(errs) != BaselineOrigins {
		t.Fatalf("%d errors, want %d (one per origin t−56 … t−7)", len(errs), BaselineOrigins)
	}
	q := Baseline(r, t0, errs)
	for i, v := range q {
		if v != 70 {
			t.Errorf("level %d: %v, want 70 (flat series, zero errors)", i, v)
		}
	}
	// Errors of ±log 2 around p = 1 case a day.
	e := []float64{-math.Log(2), 0, math.Log(2)}
	r2 := &series.Region{Name: "x", Start: day("2020-03-25"), Cases: []float64{1, 1, 1, 1, 1, 1, 1}}
	q2 := Baseline(r2, day("2020-03-31"), e)
	if q2[3] != 7 || math.Abs(q2[6]-7*(2*math.Exp(0.95*math.Log(2))-1)) > 1e-9 || q2[0] < 0 {
		t.Errorf("baseline %v", q2)
	}
	if WIS := forecast.WIS(forecast.Quantiles{7, 7, 7, 7, 7, 7, 7}, 14); math.Abs(WIS-0.5*7/3.5*(1+0.05*2/0.05+0.2*2/0.2+0.5*2/0.5)) > 1e-9 {
		t.Errorf("WIS of a point mass 7 at outcome 14: %v", WIS)
	}
	if Quarter(day("2021-06-30")) != "2021Q2" || Quarter(day("2020-10-05")) != "2020Q4" {
		t.Error("quarters")
	}
}
