package forecast

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// WIS against hand-computed values (Bracher et al. 2021, eq. 2).
func TestWISHandComputed(t *testing.T) {
	q := Quantiles{1, 2, 4, 5, 6, 8, 9}
	// Intervals: 50 % [4, 6], 80 % [2, 8], 95 % [1, 9]; median 5.
	for _, tc := range []struct {
		name string
		q    Quantiles
		y    float64
		want float64
	}{
		// y = 5: ½·0 + 0.25·2 + 0.1·6 + 0.025·8 = 1.3; /3.5
		{"at the median", q, 5, 1.3 / 3.5},
		// y = 7: ½·2 + 0.25·(2 + 4·1) + 0.1·6 + 0.025·8 = 1 + 1.5 + 0.6 + 0.2 = 3.3
		{"outside the 50 % interval", q, 7, 3.3 / 3.5},
		// y = 0: ½·5 + 0.25·(2+4·4) + 0.1·(6+10·2) + 0.025·(8+40·1) = 2.5+4.5+2.6+1.2 = 10.8
		{"below everything", q, 0, 10.8 / 3.5},
		// y = 12: ½·7 + 0.25·(2+4·6) + 0.1·(6+10·4) + 0.025·(8+40·3) = 3.5+6.5+4.6+3.2 = 17.8
		{"above everything", q, 12, 17.8 / 3.5},
		// A point mass: WIS = ½|y − m|·(1 + Σ 2αₖ/2·2/αₖ … ) = (½ + 3)·|y−m| / 3.5 = |y − m|
		{"point mass", Quantiles{3, 3, 3, 3, 3, 3, 3}, 10, 7},
	} {
		if got := WIS(tc.q, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: WIS = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIntervalScore(t *testing.T) {
	for _, tc := range []struct{ lo, hi, alpha, y, want float64 }{
		{2, 4, 0.5, 3, 2},
		{2, 4, 0.5, 1, 2 + 4*1},
		{2, 4, 0.1, 7, 2 + 20*3},
		{2, 4, 0.1, 4, 2},
	} {
		if got := IntervalScore(tc.lo, tc.hi, tc.alpha, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("IS(%v,%v,α=%v,y=%v) = %v, want %v", tc.lo, tc.hi, tc.alpha, tc.y, got, tc.want)
		}
	}
}

func TestCoveredAndPIT(t *testing.T) {
	q := Quantiles{1, 2, 4, 5, 6, 8, 9}
	for _, tc := range []struct {
		y          float64
		in50, in95 bool
		bin        int
	}{
		{0.5, false, false, 0}, {1, false, true, 1}, {3, false, true, 2}, {4, true, true, 3},
		{5.5, true, true, 4}, {6, true, true, 5}, {8.5, false, true, 6}, {9, false, true, 7}, {20, false, false, 7},
	} {
		if got := Covered(q, 0.5, tc.y); got != tc.in50 {
			t.Errorf("y=%v: in 50 %% = %v, want %v", tc.y, got, tc.in50)
		}
		if got := Covered(q, 0.95, tc.y); got != tc.in95 {
			t.Errorf("y=%v: in 95 %% = %v, want %v", tc.y, got, tc.in95)
		}
		if got := PITBin(q, tc.y); got != tc.bin {
			t.Errorf("y=%v: PIT bin %d, want %d", tc.y, got, tc.bin)
		}
	}
	if Covered(q, 0.9, 5) {
		t.Error("a 90 % interval is not carried, Covered must say false")
	}
}

// Wilson interval against values computed independently (R:
// prop.test-free formula; e.g. 8 of 10 → 0.4902, 0.9433).
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{8, 10, 0.4901625, 0.9433178},
		{0, 10, 0, 0.2775328},
		{50, 100, 0.4038315, 0.5961685},
	} {
		lo, hi := Wilson(tc.k, tc.n, 1.959963984540054)
		if math.Abs(lo-tc.lo) > 1e-6 || math.Abs(hi-tc.hi) > 1e-6 {
			t.Errorf("Wilson(%d, %d) = (%.7f, %.7f), want (%.7f, %.7f)", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := Wilson(0, 0, 1.96); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0, 0) = (%v, %v)", lo, hi)
	}
}

func TestBaseline(t *testing.T) {
	// Changes +2 and −4 symmetrised: {−4, −2, 2, 4} around last = 10.
	q := Baseline(10, []float64{2, -4})
	if q.Median() != 10 {
		t.Errorf("median %v, want the last value 10", q.Median())
	}
	// Type-7 quantile of {−4,−2,2,4} at 0.975: h = 2.925 → 2 + 0.925·2 = 3.85.
	if math.Abs(q[6]-13.85) > 1e-12 || math.Abs(q[0]-6.15) > 1e-12 {
		t.Errorf("outer quantiles %v, %v; want 6.15, 13.85", q[0], q[6])
	}
	if q := Baseline(1, []float64{5}); q[0] != 0 || !q.Valid() {
		t.Errorf("baseline near zero %v: must be clamped at 0 and valid", q)
	}
	if q := Baseline(3, nil); q != (Quantiles{3, 3, 3, 3, 3, 3, 3}) {
		t.Errorf("no history: %v", q)
	}
}

func TestFitShrinksToPrior(t *testing.T) {
	c := PersistenceCalibrator() // Shift 0.5: the centre moves
	m := c.FitErrors(nil)
	if m.Center != 0 || m.Scale != c.PriorScale || m.N != 0 {
		t.Errorf("no errors: %+v, want the prior", m)
	}
	// Many identical large errors: centre → Shift·0.4, scale → small.
	errs := make([]float64, 1000)
	for i := range errs {
		errs[i] = 0.4
	}
	m = c.FitErrors(errs)
	// Centre Shift·0.4·1000/1007; spread from the residuals 0.4 − centre
	// and the trend term κ·0.4·1000/1007 (the prior weighs 7 of 1007).
	med := 0.4 * 1000 / 1007
	res := 0.4 - c.Shift*med
	wantScale := math.Hypot(math.Sqrt((1000*res*res+7*c.PriorScale*c.PriorScale)/1007), c.Trend*med)
	if math.Abs(m.Center-c.Shift*med) > 1e-12 || math.Abs(m.Scale-wantScale) > 1e-12 {
		t.Errorf("1000 errors of 0.4: %+v, want centre %v, scale %v", m, c.Shift*med, wantScale)
	}
	// The median of the quantiles is the point forecast moved by the centre.
	q := m.Quantiles(99)
	if want := 100*math.Exp(m.Center) - 1; math.Abs(q.Median()-want) > 1e-9 {
		t.Errorf("median %v, want %v", q.Median(), want)
	}
	// Around the model (Shift 0) the median is the point forecast itself,
	// whatever the recent bias; the bias still widens the range (Trend).
	dm := DefaultCalibrator().FitErrors(errs)
	if q := dm.Quantiles(99); dm.Center != 0 || math.Abs(q.Median()-99) > 1e-9 || !(dm.Scale > 0.5*0.4) {
		t.Errorf("model's constants: %+v, median %v, want centre 0, median 99 and the trend in the scale", dm, q.Median())
	}
	// Only errors within the lookback count.
	d := []DatedError{{day("2020-11-01"), 5}, {day("2020-11-20"), 0.1}}
	if n := c.Fit(d, day("2020-11-20")).N; n != 1 {
		t.Errorf("lookback: %d errors used, want 1", n)
	}
}

func TestCalibratorValidate(t *testing.T) {
	if err := DefaultCalibrator().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Calibrator{
		{Lookback: 0, PriorScale: 1, Tail: 1},
		{Lookback: 7, PriorScale: 0, Tail: 1},
		{Lookback: 7, PriorScale: 1, PriorWeight: -1, Tail: 1},
		{Lookback: 7, PriorScale: 1, Shift: 2, Tail: 1},
		{Lookback: 7, PriorScale: 1, Tail: math.NaN()},
		{Lookback: 7, PriorScale: 1, Tail: 1, Change: -1},
		{Lookback: 7, PriorScale: 1, Tail: 1, Change: math.NaN()},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Widen adds the forecast change to the spread: nothing for a no-change
// forecast or with Change 0, and scale² + (κ·ln((ŷ+1)/(x_H+1)))² otherwise.
func TestWiden(t *testing.T) {
	m := ErrorModel{Center: 0.1, Scale: 0.3, Tail: 1, N: 5}
	x := []float64{5, 6, 9}
	c := Calibrator{Change: 2}
	if got := c.Widen(m, x, 9); got != m {
		t.Errorf("no-change forecast widened: %+v", got)
	}
	if got := (Calibrator{}).Widen(m, x, 99); got != m {
		t.Errorf("Change 0 widened: %+v", got)
	}
	// ŷ = 19: ln(20/10) = ln 2; scale = √(0.09 + (2 ln 2)²).
	got := c.Widen(m, x, 19)
	want := math.Sqrt(0.09 + 4*math.Ln2*math.Ln2)
	if math.Abs(got.Scale-want) > 1e-12 || got.Center != m.Center || got.N != m.N {
		t.Errorf("widened %+v, want scale %v", got, want)
	}
	// A fall as large widens as much.
	if down := c.Widen(m, x, 4); math.Abs(down.Scale-want) > 1e-12 {
		t.Errorf("fall to 4: scale %v, want %v", down.Scale, want)
	}
	if q := got.Quantiles(19); !q.Valid() || q[0] >= m.Quantiles(19)[0] || q[6] <= m.Quantiles(19)[6] {
		t.Errorf("widened quantiles %v not wider than %v", q, m.Quantiles(19))
	}
}

// Property: for any point forecast and error model, quantiles never cross
// and never go below zero.
func FuzzQuantilesMonotone(f *testing.F) {
	f.Add(43.5, 0.1, 0.3, 0.85)
	f.Add(-5.0, -2.0, 3.0, 2.0)
	f.Add(0.0, 0.0, 0.0, 0.5)
	f.Add(1e9, 5.0, 1e-9, 1.0)
	f.Fuzz(func(t *testing.T, point, center, scale, tail float64) {
		if math.IsNaN(point) || math.IsInf(point, 0) || math.Abs(point) > 1e12 ||
			math.IsNaN(center) || math.Abs(center) > 20 || !(scale >= 0) || scale > 10 || !(tail >= 0.5 && tail <= 2) {
			t.Skip()
		}
		q := ErrorModel{Center: center, Scale: scale, Tail: tail}.Quantiles(point)
		for i, v := range q {
			if v < 0 || math.IsNaN(v) || i > 0 && v < q[i-1] {
				t.Fatalf("point %v, centre %v, scale %v, tail %v: quantiles %v cross or go below 0", point, center, scale, tail, q)
			}
		}
	})
}

func FuzzBaselineMonotone(f *testing.F) {
	f.Add(10.0, 2.0, -4.0, 7.0)
	f.Add(0.0, 100.0, 0.0, -3.0)
	f.Fuzz(func(t *testing.T, last, a, b, c float64) {
		for _, v := range []float64{last, a, b, c} {
			if math.IsNaN(v) || math.Abs(v) > 1e12 {
				t.Skip()
			}
		}
		if q := Baseline(last, []float64{a, b, c}); !q.Valid() {
			t.Fatalf("baseline %v invalid", q)
		}
	})
}

func TestHubRoundTrip(t *testing.T) {
	fs := []HubForecast{
		{Location: "01001", ReferenceDate: day("2020-12-31"), TargetEndDate: day("2021-01-04"), Quantiles: Quantiles{1, 2, 3, 4, 5, 6, 7.25}},
		{Location: `Kiel, "city"`, ReferenceDate: day("2020-12-31"), TargetEndDate: day("2021-01-04"), Quantiles: Quantiles{0, 0, 0.5, 1, 1, 2, 3}},
	}
	var buf bytes.Buffer
	if err := WriteHub(&buf, fs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if lines[0] != strings.Join(HubColumns, ",") {
		t.Errorf("header %q", lines[0])
	}
	if len(lines) != 1+2*NumLevels {
		t.Fatalf("%d lines, want %d", len(lines), 1+2*NumLevels)
	}
	if want := "2020-12-31,7d avg inc case,4,2021-01-04,01001,quantile,0.025,1.000"; lines[1] != want {
		t.Errorf("first row %q, want %q", lines[1], want)
	}
	if !strings.Contains(buf.String(), `"Kiel, ""city"""`) {
		t.Errorf("location not CSV-quoted:\n%s", buf.String())
	}
	got, err := ReadHub(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Location != fs[1].Location || got[0].Quantiles != fs[0].Quantiles || got[0].Horizon() != 4 {
		t.Errorf("read back %+v", got)
	}
	if err := WriteHub(&bytes.Buffer{}, []HubForecast{{Location: "x", Quantiles: Quantiles{2, 1}}}); err == nil {
		t.Error("crossing quantiles written")
	}
}

func TestReadHubErrors(t *testing.T) {
	head := strings.Join(HubColumns, ",") + "\n"
	row := func(level, value string) string {
		return "2020-12-31,7d avg inc case,4,2021-01-04,A,quantile," + level + "," + value + "\n"
	}
	full := ""
	for i, l := range LevelStrings {
		full += row(l, []string{"1", "2", "3", "4", "5", "6", "7"}[i])
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty file"},
		{"missing column", "reference_date,target\n", `no column "horizon"`},
		{"missing level", head + row("0.5", "3"), "no row for level 0.025"},
		{"bad level", head + row("0.3", "3"), "output_type_id"},
		{"negative", head + row("0.5", "-1"), "line 2, column value"},
		{"bad date", head + "2020-13-01,7d avg inc case,4,2021-01-04,A,quantile,0.5,1\n", "reference_date"},
		{"bad horizon", head + "2020-12-31,7d avg inc case,5,2021-01-04,A,quantile,0.5,1\n", "horizon"},
		{"duplicate", head + full + row("0.5", "4"), "appears twice"},
		{"crossing", head + strings.Replace(full, "0.975,7", "0.975,0.5", 1), "decrease"},
	} {
		_, err := ReadHub(strings.NewReader(tc.in))
		if err == nil || !errors.Is(err, ErrHub) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if fs, err := ReadHub(strings.NewReader(head + full)); err != nil || len(fs) != 1 {
		t.Errorf("valid file: %v, %v", fs, err)
	}
}

func FuzzReadHub(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteHub(&buf, []HubForecast{{Location: "01001", ReferenceDate: day("2020-12-31"), TargetEndDate: day("2021-01-04"), Quantiles: Quantiles{1, 2, 3, 4, 5, 6, 7}}})
	f.Add(buf.String())
	f.Add("reference_date\n")
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ReadHub(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whatever parses writes back and parses to the same forecasts.
		var out bytes.Buffer
		if err := WriteHub(&out, fs); err != nil {
			t.Fatalf("parsed forecasts do not write: %v", err)
		}
		again, err := ReadHub(&out)
		if err != nil || len(again) != len(fs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestErrorsAndBacktest(t *testing.T) {
	// A series growing by 10 % a day: persistence under-forecasts, every
	// log error is positive and the shifted median moves up.
	r := &series.Region{Name: "A", Start: day("2020-10-01")}
	for i := range 60 {
		r.Cases = append(r.Cases, math.Round(10*math.Pow(1.1, float64(i))))
	}
	s := Smooth(r, series.Centered)
	c := PersistenceCalibrator()
	end := day("2020-11-15")
	pool := Errors(s, 10, 7, Persistence, end.AddDate(0, 0, -c.Lookback), end)
	if len(pool) != c.Lookback+1 {
		t.Fatalf("%d errors, want %d", len(pool), c.Lookback+1)
	}
	for _, e := range pool {
		if e.Err <= 0 {
			t.Fatalf("growing series: error %v on %s should be positive", e.Err, e.Target.Format(time.DateOnly))
		}
	}
	os := c.Backtest(s, 10, 7, Persistence, pool, []time.Time{end, day("2020-09-01")})
	if len(os) != 1 {
		t.Fatalf("%d origins, want 1 (the second has no input)", len(os))
	}
	o := os[0]
	if o.Quantiles.Median() <= o.Point || !o.Quantiles.Valid() || o.Errors != c.Lookback {
		t.Errorf("origin %+v: median should exceed the persistence point", o)
	}
	if !o.Target.Equal(day("2020-11-22")) || math.IsNaN(o.Y) {
		t.Errorf("target %s, y %v", o.Target, o.Y)
	}
	if o.Baseline.Median() != s.At(end) {
		t.Errorf("baseline median %v, want the last value %v", o.Baseline.Median(), s.At(end))
	}
}

// Persistence's constants' calibration on the synthetic outbreaks they
// were tuned on (rolling origins, persistence as the point forecaster).
func TestSyntheticCalibration(t *testing.T) {
	scores := scoreSynthetic(t, PersistenceCalibrator(), tuneScenarios, []uint64{1, 2})
	mean := 0.0
	for i, s := range scores {
		t.Logf("scenario %d, %d forecasts: coverage 50 %% %.3f, 95 %% %.3f, relative WIS %.3f", i, s.n, s.cov50, s.cov95, s.relWIS)
		if s.cov95 < 0.78 || s.cov50 > s.cov95 {
			t.Errorf("scenario %d: coverage 50 %% %.3f, 95 %% %.3f", i, s.cov50, s.cov95)
		}
		mean += s.relWIS / float64(len(scores))
	}
	if d := scores[0]; d.cov50 < 0.40 || d.cov50 > 0.60 || d.cov95 < 0.90 {
		t.Errorf("default wave: coverage 50 %% %.3f, 95 %% %.3f", d.cov50, d.cov95)
	}
	if mean > 0.92 {
		t.Errorf("mean relative WIS %.3f over the scenarios, tuned value 0.90", mean)
	}
}
