package series

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sameFloats(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return false
		}
		if !math.IsNaN(a[i]) && math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

func TestMovingAverage7(t *testing.T) {
	N := math.NaN()
	src := []float64{7, 0, 0, 0, 0, 0, 0, 14, 7}
	for _, tc := range []struct {
		name string
		src  []float64
		s    Smoothing
		want []float64
		tol  float64
	}{
		{"centered", src, Centered, []float64{N, N, N, 1, 2, 3, N, N, N}, 1e-15},
		{"trailing", src, Trailing, []float64{N, N, N, N, N, N, 1, 2, 3}, 1e-15},
		{"centered exactly 7", src[:7], Centered, []float64{N, N, N, 1, N, N, N}, 1e-15},
		{"trailing exactly 7", src[:7], Trailing, []float64{N, N, N, N, N, N, 1}, 1e-15},
		{"too short", src[:6], Centered, []float64{N, N, N, N, N, N}, 0},
		{"too short trailing", src[:3], Trailing, []float64{N, N, N}, 0},
		{"empty", nil, Centered, nil, 0},
		{"weekly pattern is flattened", []float64{1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7}, Centered,
			[]float64{N, N, N, 4, 4, 4, 4, 4, 4, 4, 4, N, N, N}, 1e-15},
	} {
		dst := make([]float64, len(tc.src))
		MovingAverage7(dst, tc.src, tc.s)
		if !sameFloats(dst, tc.want, tc.tol) {
			t.Errorf("%s: got %v, want %v", tc.name, dst, tc.want)
		}
		inPlace := append([]float64(nil), tc.src...)
		MovingAverage7(inPlace, inPlace, tc.s)
		if !sameFloats(inPlace, tc.want, tc.tol) {
			t.Errorf("%s in place: got %v, want %v", tc.name, inPlace, tc.want)
		}
	}
}

func TestMovingAverage7MatchesDirectMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, 200)
	for i := range src {
		src[i] = float64(rng.IntN(1000))
	}
	for _, s := range []Smoothing{Centered, Trailing} {
		dst := make([]float64, len(src))
		MovingAverage7(dst, src, s)
		lo, hi := s.offsets()
		for i := range src {
			if i-lo < 0 || i+hi >= len(src) {
				if !math.IsNaN(dst[i]) {
					t.Fatalf("%v: dst[%d] = %v, want NaN", s, i, dst[i])
				}
				continue
			}
			sum := 0.0
			for j := i - lo; j <= i+hi; j++ {
				sum += src[j]
			}
			if got, want := dst[i], sum/7; got != want {
				t.Fatalf("%v: dst[%d] = %v, want %v", s, i, got, want)
			}
		}
	}
}

func TestMovingAverage7Panics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "series:") {
			t.Errorf("recover() = %v, want a series: panic", r)
		}
	}()
	MovingAverage7(make([]float64, 3), make([]float64, 4), Centered)
}

// linearRegion has Cases[i] = i, so both 7-day averages on day i are
// i (centred) and i−3 (trailing).
func linearRegion(name, start string, days int) *Region {
	r := &Region{Name: name, Start: day(start), Cases: make([]float64, days)}
	for i := range r.Cases {
		r.Cases[i] = float64(i)
	}
	return r
}

func TestMakeWindowsPaperStudies(t *testing.T) {
	d := &Dataset{Regions: []*Region{
		linearRegion("A", "2020-10-01", 92),  // 2020-10-01 … 2020-12-31
		linearRegion("B", "2022-02-01", 89),  // 2022-02-01 … 2022-04-30
		linearRegion("C", "2020-10-29", 600), // both periods
	}}
	for _, tc := range []struct {
		from, to string
		regions  []*Region
		n        int
	}{
		{"2020-11-01", "2020-12-01", []*Region{d.Regions[0], d.Regions[2]}, 14},
		{"2022-03-01", "2022-04-01", []*Region{d.Regions[1], d.Regions[2]}, 15},
	} {
		sub := &Dataset{Regions: tc.regions}
		areas, err := MakeWindows(sub, WindowOptions{From: day(tc.from), To: day(tc.to)})
		if err != nil {
			t.Fatalf("%s: %v", tc.from, err)
		}
		for ai, a := range areas {
			r := tc.regions[ai]
			if a.Region != r.Name || len(a.Windows) != tc.n {
				t.Fatalf("%s %s: %d windows, want %d", tc.from, a.Region, len(a.Windows), tc.n)
			}
			from := day(tc.from)
			for w, win := range a.Windows {
				k := 10 + w // k ≥ 10, not 9
				wantEnd := from.AddDate(0, 0, k)
				if !win.InputEnd.Equal(wantEnd) || !win.Target.Equal(wantEnd.AddDate(0, 0, 7)) {
					t.Fatalf("%s window %d: input end %v target %v, want %v and +7", a.Region, w, win.InputEnd, win.Target, wantEnd)
				}
				base := float64(r.Index(wantEnd)) // smoothed linear = raw index
				for j, x := range win.X {
					if want := base - 9 + float64(j); x != want {
						t.Fatalf("%s window %d: X[%d] = %v, want %v", a.Region, w, j, x, want)
					}
				}
				if want := base + 7; win.Y != want {
					t.Fatalf("%s window %d: Y = %v, want %v", a.Region, w, win.Y, want)
				}
			}
			last := a.Windows[len(a.Windows)-1]
			if !last.Target.Equal(day(tc.to)) {
				t.Errorf("%s: last target %v, want the study window's last day %s", a.Region, last.Target, tc.to)
			}
		}
	}
}

func TestMakeWindowsGeneral(t *testing.T) {
	for _, tc := range []struct {
		name       string
		days       int
		opt        WindowOptions
		n          int
		firstEnd   string
		firstX0, y float64
	}{
		// All defined days: centred defined on indices 3 … 96, L = 94.
		{"all days centred", 100, WindowOptions{}, 94 - 17, "2020-01-14", 4, 20},
		// Trailing defined on 6 … 99 (value i−3), L = 94.
		{"all days trailing", 100, WindowOptions{Smoothing: Trailing}, 94 - 17, "2020-01-17", 4, 20},
		{"H=3 P=2", 30, WindowOptions{History: 3, Horizon: 2}, 24 - 5, "2020-01-07", 4, 8},
		{"only From", 40, WindowOptions{From: day("2020-01-11")}, 27 - 17, "2020-01-21", 11, 27},
		{"only To", 40, WindowOptions{To: day("2020-01-31")}, 28 - 17, "2020-01-14", 4, 20},
		{"From/To in another zone", 40, WindowOptions{
			From: time.Date(2020, 1, 11, 0, 30, 0, 0, time.FixedZone("CET", 3600)),
			To:   time.Date(2020, 1, 31, 23, 0, 0, 0, time.FixedZone("CET", 3600)),
		}, 21 - 17, "2020-01-21", 11, 27},
	} {
		d := &Dataset{Regions: []*Region{linearRegion("r", "2020-01-01", tc.days)}}
		areas, err := MakeWindows(d, tc.opt)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		ws := areas[0].Windows
		if len(ws) != tc.n {
			t.Errorf("%s: %d windows, want %d", tc.name, len(ws), tc.n)
			continue
		}
		if !ws[0].InputEnd.Equal(day(tc.firstEnd)) || ws[0].X[0] != tc.firstX0 || ws[0].Y != tc.y {
			t.Errorf("%s: first window ends %v, X[0] = %v, Y = %v; want %s, %v, %v",
				tc.name, ws[0].InputEnd.Format(time.DateOnly), ws[0].X[0], ws[0].Y, tc.firstEnd, tc.firstX0, tc.y)
		}
		for i := 1; i < len(ws); i++ {
			if !ws[i].Target.After(ws[i-1].Target) {
				t.Errorf("%s: windows not ordered by target", tc.name)
			}
			if &ws[i].X[0] == &ws[i-1].X[0] || cap(ws[i-1].X) != len(ws[i-1].X) {
				t.Errorf("%s: X slices overlap", tc.name)
			}
		}
	}
}

func TestMakeWindowsGapIsZero(t *testing.T) {
	// Two periods far apart: the days between are zero and windows there
	// see zeros.
	in := "date,region,cases\n"
	for d := day("2020-01-01"); !d.After(day("2020-01-20")); d = d.AddDate(0, 0, 1) {
		in += d.Format(time.DateOnly) + ",A,7\n"
	}
	for d := day("2021-06-01"); !d.After(day("2021-06-20")); d = d.AddDate(0, 0, 1) {
		in += d.Format(time.DateOnly) + ",A,7\n"
	}
	ds, err := Parse(strings.NewReader(in), "gap.csv")
	if err != nil {
		t.Fatal(err)
	}
	r := ds.Regions[0]
	if v, ok := r.At(day("2020-12-25")); !ok || v != 0 {
		t.Errorf("gap day = %v, %v; want 0, true", v, ok)
	}
	areas, err := MakeWindows(ds, WindowOptions{From: day("2020-01-04"), To: day("2020-01-17"), History: 3, Horizon: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(areas[0].Windows) != 14-3-2 {
		t.Fatalf("%d windows, want 9", len(areas[0].Windows))
	}
	for _, w := range areas[0].Windows {
		for _, x := range append(w.X, w.Y) {
			if x != 7 {
				t.Errorf("window inside the first period sees %v, want 7", x)
			}
		}
	}
	areas, err = MakeWindows(ds, WindowOptions{From: day("2020-01-15"), To: day("2020-02-15")})
	if err != nil {
		t.Fatal(err)
	}
	if w := areas[0].Windows[len(areas[0].Windows)-1]; w.Y != 0 {
		t.Errorf("target inside the gap = %v, want 0", w.Y)
	}
}

func TestMakeWindowsErrors(t *testing.T) {
	nov := &Dataset{Regions: []*Region{linearRegion("01001", "2020-11-01", 61)}} // 11-01 … 12-31
	for _, tc := range []struct {
		name string
		d    *Dataset
		opt  WindowOptions
		err  error
		msg  []string
	}{
		{"start margin", nov, WindowOptions{From: day("2020-11-01"), To: day("2020-12-01")}, ErrNotCovered,
			[]string{`"01001"`, "2020-10-29 … 2020-10-31", "needs 2020-10-29 … 2020-12-04"}},
		{"end margin", nov, WindowOptions{From: day("2020-11-10"), To: day("2020-12-30")}, ErrNotCovered,
			[]string{"2021-01-01 … 2021-01-02"}},
		{"trailing margin", nov, WindowOptions{From: day("2020-11-05"), To: day("2020-12-30"), Smoothing: Trailing}, ErrNotCovered,
			[]string{"2020-10-30 … 2020-10-31", "trailing"}},
		{"outside entirely", nov, WindowOptions{From: day("2022-03-01"), To: day("2022-04-01")}, ErrNotCovered,
			[]string{"2022-02-26 … 2022-04-04"}},
		{"too short window", nov, WindowOptions{From: day("2020-11-10"), To: day("2020-11-26")}, ErrTooShort,
			[]string{"17 days", "at least 18"}},
		{"too short series", &Dataset{Regions: []*Region{linearRegion("x", "2020-11-01", 5)}}, WindowOptions{}, ErrTooShort,
			[]string{`"x"`}},
		{"reversed", nov, WindowOptions{From: day("2020-12-01"), To: day("2020-11-01")}, ErrOption, []string{"before it starts"}},
		{"negative H", nov, WindowOptions{History: -1}, ErrOption, []string{"history"}},
		{"negative P", nov, WindowOptions{Horizon: -2}, ErrOption, []string{"horizon"}},
		{"bad smoothing", nov, WindowOptions{Smoothing: 7}, ErrOption, []string{"smoothing"}},
	} {
		_, err := MakeWindows(tc.d, tc.opt)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.err)
			continue
		}
		for _, m := range tc.msg {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not mention %q", tc.name, err, m)
			}
		}
	}
}

func TestLatestInput(t *testing.T) {
	r := linearRegion("A", "2020-11-01", 30) // last day 2020-11-30, raw value 29
	for _, tc := range []struct {
		name          string
		opt           WindowOptions
		end, target   string
		firstX, lastX float64
	}{
		// Centred: last smoothed day is 11-27 (value 26); P = 7 → 4 days past the data.
		{"centred", WindowOptions{}, "2020-11-27", "2020-12-04", 17, 26},
		// Trailing: ends on the last day (value 29−3), target 7 days later.
		{"trailing", WindowOptions{Smoothing: Trailing}, "2020-11-30", "2020-12-07", 17, 26},
		{"as of To", WindowOptions{To: day("2020-11-20")}, "2020-11-17", "2020-11-24", 7, 16},
		{"H=4 P=1", WindowOptions{History: 4, Horizon: 1}, "2020-11-27", "2020-11-28", 23, 26},
	} {
		x, end, target, err := LatestInput(r, tc.opt)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		H := tc.opt.History
		if H == 0 {
			H = DefaultHistory
		}
		if len(x) != H || x[0] != tc.firstX || x[H-1] != tc.lastX ||
			!end.Equal(day(tc.end)) || !target.Equal(day(tc.target)) {
			t.Errorf("%s: x = %v, end %s, target %s; want x[0] %v x[H-1] %v, %s, %s", tc.name, x,
				end.Format(time.DateOnly), target.Format(time.DateOnly), tc.firstX, tc.lastX, tc.end, tc.target)
		}
	}
	if _, _, _, err := LatestInput(linearRegion("s", "2020-11-01", 15), WindowOptions{}); !errors.Is(err, ErrTooShort) {
		t.Errorf("15 days: got %v, want ErrTooShort", err)
	}
	if _, _, _, err := LatestInput(linearRegion("s", "2020-11-01", 16), WindowOptions{}); err != nil {
		t.Errorf("16 days (H+6) should be enough: %v", err)
	}
	if _, _, _, err := LatestInput(r, WindowOptions{To: day("2020-12-05")}); !errors.Is(err, ErrNotCovered) {
		t.Errorf("To after the data: got %v, want ErrNotCovered", err)
	}
}

func TestLatestInputMatchesLastWindow(t *testing.T) {
	// The live input for a day d equals the input of the window whose
	// input ends on the same day.
	rng := rand.New(rand.NewPCG(3, 4))
	r := &Region{Name: "A", Start: day("2021-01-01"), Cases: make([]float64, 60)}
	for i := range r.Cases {
		r.Cases[i] = float64(rng.IntN(50))
	}
	areas, err := MakeWindows(&Dataset{Regions: []*Region{r}}, WindowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := areas[0].Windows[len(areas[0].Windows)-1]
	x, end, _, err := LatestInput(r, WindowOptions{To: w.InputEnd.AddDate(0, 0, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if !end.Equal(w.InputEnd) || !reflect.DeepEqual(x, w.X) {
		t.Errorf("LatestInput = %v ending %v, want %v ending %v", x, end, w.X, w.InputEnd)
	}
}

func windowsOf(n int) Area {
	a := Area{Region: "A"}
	for i := range n {
		a.Windows = append(a.Windows, Window{Region: "A", X: []float64{float64(i)}, Y: float64(i),
			Target: day("2020-01-01").AddDate(0, 0, i)})
	}
	return a
}

func TestSplitAreas(t *testing.T) {
	areas := []Area{windowsOf(14), windowsOf(15), windowsOf(1), windowsOf(0)}
	areas[1].Region = "B"
	for _, s := range []Split{Temporal, Random} {
		rng := rand.New(rand.NewPCG(7, 7))
		train, test := SplitAreas(areas, s, 0.9, rng)
		for i, want := range [][2]int{{12, 2}, {13, 2}, {0, 1}, {0, 0}} {
			if train[i].Region != areas[i].Region || test[i].Region != areas[i].Region {
				t.Errorf("%v: area order changed", s)
			}
			if len(train[i].Windows) != want[0] || len(test[i].Windows) != want[1] {
				t.Errorf("%v area %d: %d/%d, want %d/%d", s, i, len(train[i].Windows), len(test[i].Windows), want[0], want[1])
			}
			seen := map[float64]bool{}
			for _, part := range [][]Window{train[i].Windows, test[i].Windows} {
				for j, w := range part {
					if seen[w.Y] {
						t.Errorf("%v: window %v twice", s, w.Y)
					}
					seen[w.Y] = true
					if j > 0 && !part[j-1].Target.Before(w.Target) {
						t.Errorf("%v: part not sorted by target", s)
					}
				}
			}
			if len(seen) != len(areas[i].Windows) {
				t.Errorf("%v: lost windows", s)
			}
		}
		if s == Temporal {
			for i := range areas {
				if len(test[i].Windows) > 0 && len(train[i].Windows) > 0 &&
					!train[i].Windows[len(train[i].Windows)-1].Target.Before(test[i].Windows[0].Target) {
					t.Errorf("temporal: a test target precedes a training target")
				}
			}
			if test[0].Windows[0].Y != 12 || test[0].Windows[1].Y != 13 {
				t.Errorf("temporal: test windows %v, want the last two", test[0].Windows)
			}
		}
	}
	// Random is reproducible from the seed, differs across seeds, and leaves the input alone.
	_, t1 := SplitAreas(areas, Random, 0, rand.New(rand.NewPCG(1, 1)))
	_, t2 := SplitAreas(areas, Random, 0, rand.New(rand.NewPCG(1, 1)))
	if !reflect.DeepEqual(t1, t2) {
		t.Errorf("random split not reproducible")
	}
	differs := false
	for seed := uint64(2); seed < 12 && !differs; seed++ {
		_, t3 := SplitAreas(areas, Random, 0, rand.New(rand.NewPCG(seed, seed)))
		differs = !reflect.DeepEqual(t1, t3)
	}
	if !differs {
		t.Errorf("random split ignores the seed")
	}
	for i, w := range areas[0].Windows {
		if w.Y != float64(i) {
			t.Fatalf("SplitAreas reordered its input")
		}
	}
}

func TestSplitAreasPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"fraction > 1", func() { SplitAreas(nil, Temporal, 1.5, nil) }},
		{"fraction NaN", func() { SplitAreas(nil, Temporal, math.NaN(), nil) }},
		{"random without rng", func() { SplitAreas(nil, Random, 0.9, nil) }},
		{"unknown split", func() { SplitAreas(nil, Split(9), 0.9, nil) }},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

func TestParseSplitAndSmoothing(t *testing.T) {
	for in, want := range map[string]Split{"temporal": Temporal, "Random": Random, " random ": Random} {
		if got, err := ParseSplit(in); err != nil || got != want {
			t.Errorf("ParseSplit(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSplit("time"); !errors.Is(err, ErrOption) {
		t.Errorf("ParseSplit(time) = %v", err)
	}
	for in, want := range map[string]Smoothing{"centered": Centered, "Centred": Centered, "trailing": Trailing} {
		if got, err := ParseSmoothing(in); err != nil || got != want {
			t.Errorf("ParseSmoothing(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSmoothing("ewma"); !errors.Is(err, ErrOption) {
		t.Errorf("ParseSmoothing(ewma) = %v", err)
	}
	if Temporal.String() != "temporal" || Random.String() != "random" || Trailing.String() != "trailing" {
		t.Errorf("String methods wrong")
	}
}

func TestStack(t *testing.T) {
	areas := []Area{
		{Region: "A", Windows: []Window{{X: []float64{1, 2}, Y: 3}, {X: []float64{4, 5}, Y: 6}}},
		{Region: "B"},
		{Region: "C", Windows: []Window{{X: []float64{7, 8}, Y: 9}}},
	}
	x, y := Stack(areas)
	if !reflect.DeepEqual(x, []float64{1, 2, 4, 5, 7, 8}) || !reflect.DeepEqual(y, []float64{3, 6, 9}) {
		t.Errorf("Stack = %v, %v", x, y)
	}
	if x, y := Stack(nil); x != nil || y != nil {
		t.Errorf("Stack(nil) = %v, %v", x, y)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("ragged Stack did not panic")
		}
	}()
	Stack([]Area{{Windows: []Window{{X: []float64{1}}, {X: []float64{1, 2}}}}})
}
