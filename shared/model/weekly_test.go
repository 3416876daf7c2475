package model

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

func date(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestHolidays(t *testing.T) {
	for _, tc := range []struct {
		state, day string
		want       bool
	}{
		{"Bayern", "2021-01-06", true},              // Heilige Drei Könige
		{"Berlin", "2021-01-06", false},             // not in Berlin
		{"Berlin", "2021-03-08", true},              // Frauentag
		{"Nordrhein-Westfalen", "2021-06-03", true}, // Fronleichnam
		{"Niedersachsen", "2021-06-03", false},
		{"Sachsen", "2020-11-18", true}, // Buß- und Bettag
		{"Hessen", "2020-12-25", true},
		{"Hessen", "2020-12-24", false},
		{" thüringen ", "2021-04-05", true}, // Ostermontag; case and spaces ignored
		{"", "2020-12-25", false},           // no state: no holidays
	} {
		h := NewHolidays(tc.state)
		if h.Known != (tc.state != "") {
			t.Errorf("NewHolidays(%q).Known = %v", tc.state, h.Known)
		}
		if got := h.Is(date(tc.day)); got != tc.want {
			t.Errorf("%s %s: holiday %v, want %v", tc.state, tc.day, got, tc.want)
		}
	}
	if h := NewHolidays("Atlantis"); h.Known || h.Is(date("2020-12-25")) {
		t.Error("NewHolidays(Atlantis) has holidays")
	}
	if err := HolidayCheck("Atlantis"); err == nil || !strings.Contains(err.Error(), `"Atlantis"`) {
		t.Errorf("HolidayCheck(Atlantis): %v, want an error naming it", err)
	}
	if err := HolidayCheck("Sachsen"); err != nil {
		t.Error(err)
	}
	h := NewHolidays("Bayern")
	// 2020-12-25 … 2020-12-31: Weihnachtstag and the second day.
	if got := h.Share(date("2020-12-31")); math.Abs(got-2.0/7) > 1e-12 {
		t.Errorf("share of the week to 2020-12-31 in Bayern = %v, want 2/7", got)
	}
}

// region returns a series from start whose day i reports f(i).
func region(name, start string, days int, f func(i int) float64) *series.Region {
	r := &series.Region{Name: name, Start: date(start), Cases: make([]float64, days)}
	for i := range r.Cases {
		r.Cases[i] = f(i)
	}
	return r
}

// The inputs are what the package documentation says, the totals are read
// by date whatever day their series starts on, and the holiday shares are
// those of the area's state.
func TestWeeklyInput(t *testing.T) {
	w := Weekly{Weeks: 2, Totals: true, Holidays: true, HistoryWeeks: 52, Stride: 1}
	// Weekly totals of the area: 7·2^(week); the national series starts
	// 10 days earlier and grows 3× a week; the state's is flat.
	area := region("A", "2020-12-01", 60, func(i int) float64 { return math.Pow(2, float64(i/7)) })
	nat := region("N", "2020-11-21", 80, func(i int) float64 { return math.Pow(3, float64((i-10+70)/7)) })
	st := region("S", "2020-12-01", 60, func(int) float64 { return 5 })
	hol := NewHolidays("Bayern")
	pub := Public{National: nat, State: st, Holidays: hol, Population: 1e5}
	origin := date("2020-12-01").AddDate(0, 0, 7*4-1) // last day of week 3 (0-based)
	got := make([]float64, w.Inputs())
	if !w.Input(got, area, pub, origin) {
		t.Fatal("Input refused a covered window")
	}
	l2 := math.Log1p(56) - math.Log1p(28) // week 3 vs week 2 totals: 7·8 and 7·4
	l1 := math.Log1p(28) - math.Log1p(14)
	n2 := math.Log1p(7*math.Pow(3, 13)) - math.Log1p(7*math.Pow(3, 12))
	n1 := math.Log1p(7*math.Pow(3, 12)) - math.Log1p(7*math.Pow(3, 11))
	want := []float64{l2, l1, math.Log1p(56) / 5, n2, n1, 0, 0,
		0,          // 2020-12-22 … 12-28 … is the input week: origin is 2020-12-28
		0, 2.0 / 7} // the target week 12-29 … 01-04 holds 01-01 (and, in Bayern, not 01-06)
	want[7] = 2.0 / 7 // 12-25 and 12-26 fall in the last input week (12-22 … 12-28)
	want[9] = 1.0 / 7 // 2021-01-01 in 12-29 … 01-04
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("input %d = %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	if origin.Format("2006-01-02") != "2020-12-28" {
		t.Fatalf("origin %v", origin)
	}
	// Too early for 2 weeks of changes (needs 20 days before the origin).
	if w.Input(got, area, pub, date("2020-12-15")) {
		t.Error("Input accepted a window the series does not cover")
	}
	// A missing total reads as no change, not as a failure.
	if !w.Input(got, area, Public{}, origin) || got[3] != 0 || got[5] != 0 || got[2] != 0 {
		t.Errorf("without public inputs: %v", got)
	}
}

func TestWeeklyTargetForecastRoundTrip(t *testing.T) {
	r := region("A", "2021-01-01", 40, func(i int) float64 { return float64(3 + i%5) })
	for _, o := range []string{"2021-01-10", "2021-01-20"} {
		tgt, ok := Target(r, date(o))
		if !ok {
			t.Fatal("no target")
		}
		next, _ := Total7(r, date(o).AddDate(0, 0, 7))
		if got := ForecastTotal(r, date(o), tgt, 1); math.Abs(got-next) > 1e-9 {
			t.Errorf("%s: forecast of the target %v, want %v", o, got, next)
		}
		now, _ := Total7(r, date(o))
		if got := ForecastTotal(r, date(o), 0, 1); got != now {
			t.Errorf("%s: output 0 gives %v, want no change %v", o, got, now)
		}
	}
	if _, ok := Target(r, date("2021-02-05")); ok {
		t.Error("a target past the series' end")
	}
}

// No look-ahead: the windows of a campaign starting on asOf and the input
// of an origin read nothing after them. A spike planted in every series
// after that day changes nothing.
func TestWeeklyNoLookAhead(t *testing.T) {
	w := *WeeklyDesign.Weekly
	w.Stride = 1
	mk := func(spike time.Time) (*series.Region, Public) {
		f := func(start string) func(int) float64 {
			return func(i int) float64 {
				d := date(start).AddDate(0, 0, i)
				if !d.Before(spike) {
					return 1e6
				}
				return 50 + 20*math.Sin(float64(i)/9)
			}
		}
		hol := NewHolidays("Hessen")
		return region("A", "2020-03-01", 300, f("2020-03-01")),
			Public{National: region("N", "2020-02-20", 320, f("2020-02-20")), State: region("S", "2020-03-01", 300, f("2020-03-01")), Holidays: hol, Population: 2e5}
	}
	asOf := date("2020-10-05")
	a0, p0 := mk(date("2030-01-01"))
	a1, p1 := mk(asOf.AddDate(0, 0, 1))
	x0, y0 := w.Windows(a0, p0, asOf)
	x1, y1 := w.Windows(a1, p1, asOf)
	if len(y0) == 0 || !slices.Equal(x0, x1) || !slices.Equal(y0, y1) {
		t.Errorf("the windows of a campaign starting %v changed with data after it (%d windows)", asOf, len(y0))
	}
	in0, in1 := make([]float64, w.Inputs()), make([]float64, w.Inputs())
	w.Input(in0, a0, p0, asOf)
	w.Input(in1, a1, p1, asOf)
	if !slices.Equal(in0, in1) {
		t.Errorf("the inputs at %v changed with data after it", asOf)
	}
	// And the spike is seen once it is in the past (the test can fail).
	a2, p2 := mk(asOf)
	w.Input(in1, a2, p2, asOf)
	if slices.Equal(in0, in1) {
		t.Error("a spike on the origin itself did not change the inputs")
	}
	// One window per day from the first origin the series covers
	// (2020-03-01 + Lead = 2020-04-04) to asOf − 7 = 2020-09-28.
	if len(y0) != 178 {
		t.Errorf("%d windows from 2020-03-01 to %v, want 178", len(y0), asOf)
	}
	// HistoryWeeks bounds them: 12 weeks back from asOf − 7, every day.
	short := w
	short.HistoryWeeks = 12
	if _, y := short.Windows(a0, p0, asOf); len(y) != 7*11+1 {
		t.Errorf("%d windows with 12 weeks of history, want %d", len(y), 7*11+1)
	}
	// Stride 2: every other origin, the newest (asOf − 7) kept.
	short.Stride = 2
	if x, y := short.Windows(a0, p0, asOf); len(y) != 39 || !slices.Equal(x[len(x)-w.Inputs():], x0[len(x0)-w.Inputs():]) {
		t.Errorf("%d windows with stride 2, want 39 ending on the same origin", len(y))
	}
}

func TestReplayPreset(t *testing.T) {
	for name, want := range map[string]string{"": "weekly", "weekly": "weekly", "weekly-e15": "weekly-e15", "weekly-squared": "weekly-squared", "weekly-trend": "weekly-trend", "monthly": "default", "default": "default", "paper": "paper"} {
		d, err := ReplayPreset(name)
		if err != nil || d.Name != want {
			t.Errorf("ReplayPreset(%q) = %q, %v; want %q", name, d.Name, err, want)
		}
	}
	if _, err := ReplayPreset("yearly"); err == nil {
		t.Error("ReplayPreset(yearly) accepted")
	}
	if d, err := Preset("monthly"); err != nil || d.Name != "default" {
		t.Errorf("Preset(monthly) = %q, %v", d.Name, err)
	}
	if _, err := Preset("weekly"); err == nil {
		t.Error("the one-month presets accept the weekly design")
	}
	if _, err := Parse(string(WeeklyTotal)); err == nil {
		t.Error("Parse accepts the weekly feature map (a study file could carry it)")
	}
	d := WeeklyDesign
	if err := d.Weekly.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := d.Network().NumParams(); n < 500 || n > 700 {
		t.Errorf("the weekly design has %d parameters, want about 600", n)
	}
	// The weekly design takes 30 local steps a round (the eighth round's
	// E = 15 was reversed); weekly-e15 is it but for the local steps, and
	// weekly-squared is it but for the loss.
	e15, _ := ReplayPreset("weekly-e15")
	if WeeklyDesign.LocalEpochs != 30 || e15.LocalEpochs != 15 {
		t.Errorf("local steps: weekly %d, weekly-e15 %d; want 30 and 15", WeeklyDesign.LocalEpochs, e15.LocalEpochs)
	}
	e15.Name, e15.LocalEpochs = WeeklyDesign.Name, WeeklyDesign.LocalEpochs
	if !reflect.DeepEqual(e15, WeeklyDesign) {
		t.Errorf("weekly-e15 %+v differs from the weekly design %+v beyond the local steps", e15, WeeklyDesign)
	}
	if _, err := ReplayPreset("weekly-e30"); err == nil {
		t.Error("ReplayPreset(weekly-e30) accepted: that name went with the eighth round's reversal (the design is weekly)")
	}
	sq, _ := ReplayPreset("weekly-squared")
	if sq.LocalEpochs != 30 || sq.Weekly.Loss != "" {
		t.Errorf("weekly-squared: %d local steps, loss %q; want 30 and the squared error", sq.LocalEpochs, sq.Weekly.Loss)
	}
	sq.Name, sq.Weekly.Loss = WeeklyDesign.Name, WeeklyDesign.Weekly.Loss
	if !reflect.DeepEqual(sq, WeeklyDesign) {
		t.Errorf("weekly-squared %+v differs from the weekly design %+v beyond the loss", sq, WeeklyDesign)
	}
	// weekly-trend is the weekly design but for its median rule.
	tr, _ := ReplayPreset("weekly-trend")
	if tr.Weekly.Median != "network+state-trend" || !tr.Weekly.TrendOffHolidays || WeeklyDesign.Weekly.Median != "" {
		t.Errorf("weekly-trend's median %q (off holidays %v), the weekly design's %q", tr.Weekly.Median, tr.Weekly.TrendOffHolidays, WeeklyDesign.Weekly.Median)
	}
	tr.Name, tr.Weekly.Median, tr.Weekly.TrendOffHolidays = WeeklyDesign.Name, "", false
	if !reflect.DeepEqual(tr, WeeklyDesign) {
		t.Errorf("weekly-trend %+v differs from the weekly design %+v beyond the median", tr, WeeklyDesign)
	}
	c := WeeklyDesign.clone()
	c.Weekly.Weeks = 9
	if WeeklyDesign.Weekly.Weeks == 9 {
		t.Error("clone shares the Weekly settings")
	}
}

// ClipTarget bounds the training targets (only those beyond it change);
// Loss names the training loss; both are validated.
func TestWeeklyClipTargetAndLoss(t *testing.T) {
	// A series doubling every week with a dump of 10⁵ cases: log-changes
	// of about 0.69 and much larger ones around the dump.
	a := region("A", "2020-03-01", 200, func(i int) float64 {
		if i == 150 {
			return 1e5
		}
		return math.Pow(2, float64(i)/7)
	})
	w := *WeeklyDesign.Weekly
	_, y := w.Windows(a, Public{}, date("2020-09-01"))
	c := w
	c.ClipTarget = 0.5
	_, yc := c.Windows(a, Public{}, date("2020-09-01"))
	if len(y) == 0 || len(y) != len(yc) {
		t.Fatalf("%d and %d windows", len(y), len(yc))
	}
	clipped := 0
	for i := range y {
		want := math.Max(-0.5, math.Min(0.5, y[i]))
		if yc[i] != want {
			t.Errorf("window %d: target %v clipped to %v, want %v", i, y[i], yc[i], want)
		}
		if yc[i] != y[i] {
			clipped++
		}
	}
	if clipped == 0 {
		t.Error("no target beyond ±0.5: the test checks nothing")
	}
	if w.TrainLoss() != nn.AbsoluteError || WeeklySquared.Weekly.TrainLoss() != nn.SquaredError {
		t.Error("the weekly design does not train with the absolute error, or weekly-squared not with the squared error")
	}
	for _, bad := range []Weekly{{ClipTarget: -1}, {ClipTarget: math.Inf(1)}, {ClipTarget: math.NaN()}, {Loss: "pinball"}} {
		b := w
		b.ClipTarget, b.Loss = bad.ClipTarget, bad.Loss
		if b.Validate() == nil {
			t.Errorf("clip %v, loss %q accepted", bad.ClipTarget, bad.Loss)
		}
	}
	for _, bad := range []Weekly{{PersonalSteps: -1}, {PersonalSteps: 1001}, {PersonalRate: -0.1}, {PersonalRate: math.NaN()}} {
		b := w
		b.PersonalSteps, b.PersonalRate = bad.PersonalSteps, bad.PersonalRate
		if b.Validate() == nil {
			t.Errorf("personalisation steps %d, rate %v accepted", bad.PersonalSteps, bad.PersonalRate)
		}
	}
	c.Loss = ""
	if c.Validate() != nil || c.TrainLoss() != nn.SquaredError {
		t.Error("loss \"\" is not the squared error")
	}
}
