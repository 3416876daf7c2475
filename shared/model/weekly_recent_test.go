package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// recentInput returns the recent change, the last input, of the window
// ending on day i of r (with the wave inputs on too, so its place after
// them is checked).
func recentInput(t *testing.T, r *series.Region, pub Public, i int) float64 {
	t.Helper()
	w := Weekly{Weeks: 2, Totals: true, HistoryWeeks: 52, Stride: 1, CumIncidence: true, PeakDistance: true, Recent: true}
	in := make([]float64, w.Inputs())
	if !w.Input(in, r, pub, r.Date(i)) {
		t.Fatalf("day %d: Input refused a covered window", i)
	}
	return in[len(in)-1]
}

// The recent change compares the area's last 3 days with the same 3
// weekdays a week before, on the log scale.
func TestWeeklyRecentChange(t *testing.T) {
	a := waveArea() // 10 a day to day 69, 100 a day on 70 … 104, then 40
	for _, tc := range []struct {
		day  int
		want float64
	}{
		{60, 0},                                  // flat at 10
		{72, math.Log1p(300) - math.Log1p(30)},   // the rise: 3 days of 100 against 3 of 10
		{71, math.Log1p(210) - math.Log1p(30)},   // 10 + 100 + 100 against 3 of 10
		{106, math.Log1p(180) - math.Log1p(300)}, // 100 + 40 + 40 against 3 of 100
		{200, 0},                                 // flat at 40
	} {
		if got := recentInput(t, a, Public{}, tc.day); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("day %d: recent change %v, want %v", tc.day, got, tc.want)
		}
	}
	// Negative counts (corrections) read as 0, as in the 7-day totals.
	neg := region("A", "2020-01-01", 100, func(i int) float64 { return map[bool]float64{true: -5, false: 8}[i == 80] })
	if got, want := recentInput(t, neg, Public{}, 81), math.Log1p(16)-math.Log1p(24); math.Abs(got-want) > 1e-12 {
		t.Errorf("a negative day: recent change %v, want %v", got, want)
	}
	// The option adds one input after all the others, which do not move.
	base := Weekly{Weeks: 4, Totals: true, Holidays: true, HistoryWeeks: 52, Stride: 2}
	withR := base
	withR.Recent = true
	if withR.Inputs() != base.Inputs()+1 {
		t.Fatalf("%d inputs with the recent change, want %d", withR.Inputs(), base.Inputs()+1)
	}
	checkAppended(t, "the recent change", base, withR, a, Public{Population: 1e5}, 300)
}

// No look-ahead and no other area: a spike after the origin, or in the
// state or national total, leaves the recent change as it was; a spike on
// the origin, or 7 days before it, moves it; one 10 days before does not
// (it reads origin−9 … origin).
func TestWeeklyRecentNoLookAheadOwnOnly(t *testing.T) {
	const origin = 300
	a := region("A", "2020-01-01", 500, func(i int) float64 { return 20 + float64(i%7) })
	st := region("S", "2020-01-01", 500, func(i int) float64 { return 300 + float64(i%5) })
	pub := Public{State: st, National: st, Population: 2e5}
	want := recentInput(t, a, pub, origin)
	for _, tc := range []struct {
		name string
		area *series.Region
		pub  Public
		same bool
	}{
		{"area spike after the origin", spiked(a, origin+1, 499), pub, true},
		{"state and national spike", a, Public{State: spiked(st, 0, 499), National: spiked(st, 0, 499), Population: 2e5}, true},
		{"area spike 10 days back", spiked(a, origin-10, origin-10), pub, true},
		{"area spike on the origin", spiked(a, origin, origin), pub, false},
		{"area spike 7 days back", spiked(a, origin-7, origin-7), pub, false},
	} {
		if got := recentInput(t, tc.area, tc.pub, origin); (got == want) != tc.same {
			t.Errorf("%s: recent change %v, before %v (unchanged: want %v)", tc.name, got, want, tc.same)
		}
	}
}

// Level weights repeat a window 1 + round(3·S/max S) times: the week with
// the largest 7-day total 4 times, a sixth of it twice (round(0.5) = 1),
// a quiet week once, 0.55 of it 3 times; the windows keep their order and
// their values.
func TestWeeklyLevelWeights(t *testing.T) {
	x := []float64{1, 1, 2, 2, 3, 3, 4, 4}
	y := []float64{0.1, 0.2, 0.3, 0.4}
	level := []float64{600, 100, 0, 330}
	wx, wy := levelWeighted(x, y, level, 2)
	wantY := []float64{0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.3, 0.4, 0.4, 0.4}
	if !slices.Equal(wy, wantY) {
		t.Fatalf("weighted targets %v, want %v", wy, wantY)
	}
	for i, v := range wy {
		k := slices.Index(y, v)
		if !slices.Equal(wx[2*i:2*i+2], x[2*k:2*k+2]) {
			t.Errorf("row %d: inputs %v, want window %d's %v", i, wx[2*i:2*i+2], k, x[2*k:2*k+2])
		}
	}
	// Without any positive level every window counts once.
	if _, wy := levelWeighted(x, y, []float64{0, 0, 0, 0}, 2); !slices.Equal(wy, y) {
		t.Errorf("no cases: %v, want the windows once each", wy)
	}
	// Through Windows: the same windows as without the option, the
	// busiest repeated most, and nothing read after asOf (a spike after
	// it changes no weight).
	a := waveArea()
	w := Weekly{Weeks: 2, HistoryWeeks: 52, Stride: 1}
	lw := w
	lw.LevelWeight = true
	asOf := a.Date(200)
	_, y0 := w.Windows(a, Public{}, asOf)
	_, y1 := lw.Windows(a, Public{}, asOf)
	if len(y1) <= len(y0) || len(y1) > 4*len(y0) {
		t.Fatalf("%d weighted windows from %d, want more and at most 4 times as many", len(y1), len(y0))
	}
	later := &series.Region{Name: a.Name, Start: a.Start, Cases: slices.Clone(a.Cases)}
	for i := 201; i < len(later.Cases); i++ {
		later.Cases[i] = 1e6
	}
	if _, y2 := lw.Windows(later, Public{}, asOf); !slices.Equal(y1, y2) {
		t.Error("a spike after asOf changed the weighted windows")
	}
}

// The pairs start draws nothing, is the no-change forecast, and its first
// layer holds the positive and the negative part of each input: the
// hidden activations of an input x are max(x_k, 0) and max(−x_k, 0).
func TestPairsInit(t *testing.T) {
	d := WeeklyDesign.clone()
	d.Weekly.Init = "pairs"
	if err := d.Weekly.Validate(); err != nil {
		t.Fatal(err)
	}
	m := d.Network()
	a, b := make([]float64, m.NumParams()), make([]float64, m.NumParams())
	d.Init(m, a, rand.New(rand.NewPCG(1, 2)))
	d.Init(m, b, rand.New(rand.NewPCG(3, 4)))
	if !slices.Equal(a, b) {
		t.Fatal("the pairs start depends on the seed")
	}
	n := d.Weekly.Inputs()
	x := make([]float64, n)
	for k := range x {
		x[k] = float64(k) - 7.5
	}
	out := make([]float64, 1)
	m.Predict(a, x, out)
	if out[0] != 0 {
		t.Errorf("the pairs start forecasts a change of %v, want 0 (no change)", out[0])
	}
	// Hidden unit j = max(±x_{j/2}, 0): read through a network whose
	// output layer sums hidden units 2k and 2k+1 with weights +1 and −1,
	// which gives back x_k.
	for k := range n {
		p := slices.Clone(a)
		last := len(p) - 33
		p[last+2*k], p[last+2*k+1] = 1, -1
		m.Predict(p, x, out)
		if math.Abs(out[0]-x[k]) > 1e-6 {
			t.Errorf("input %d: the pair gives %v, want %v", k, out[0], x[k])
		}
	}
	d.Weekly.Init = "zeros"
	if err := d.Weekly.Validate(); err == nil {
		t.Error("an unknown start was accepted")
	}
	// A second hidden layer copies the first.
	m2 := nn.NewMLP(2, 4, 4, 1)
	p2 := make([]float64, m2.NumParams())
	PairsInit(m2, p2)
	want := []float64{1, 0, -1, 0, 0, 1, 0, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(p2, want) {
		t.Errorf("2-4-4-1 pairs start %v, want %v", p2, want)
	}
}

// A campaign starts from the previous model, the initial one, or halfway;
// an unknown setting is refused.
func TestStartCampaign(t *testing.T) {
	prev, start := []float64{2, -4, 6}, []float64{0, 4, 1}
	for _, tc := range []struct {
		setting string
		want    []float64
	}{
		{"", []float64{2, -4, 6}},
		{"restart", []float64{0, 4, 1}},
		{"half", []float64{1, 0, 3.5}},
	} {
		d := Design{Name: "w", CampaignStart: tc.setting}
		if err := d.CheckCampaignStart(); err != nil {
			t.Fatalf("%q: %v", tc.setting, err)
		}
		got := make([]float64, 3)
		d.StartCampaign(got, prev, start)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: campaign starts from %v, want %v", tc.setting, got, tc.want)
		}
	}
	if err := (Design{Name: "w", CampaignStart: "fresh"}).CheckCampaignStart(); err == nil {
		t.Error("an unknown campaign start was accepted")
	}
}
