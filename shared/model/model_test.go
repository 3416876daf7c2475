package model

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Features
		ok   bool
	}{{"", Counts, true}, {"counts", Counts, true}, {"log-change", LogChange, true}, {"log", "", false}, {"Counts", "", false}} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// The log-change map is invertible: forecasting the target gives back y,
// and it is scale-free: a window ×k (plus the +1 of ln(1+v)) maps alike.
func TestLogChangeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		x []float64
		y float64
	}{
		{[]float64{10, 12, 15, 20}, 31},
		{[]float64{0, 0, 0, 0}, 0},
		{[]float64{0, 1, 0, 2}, 7.5},
		{[]float64{5000, 5100, 5200, 5300}, 4000},
	} {
		tgt := LogChange.Target(tc.x, tc.y)
		if got := LogChange.Forecast(tc.x, tgt); math.Abs(got-tc.y) > 1e-9*math.Max(1, tc.y) {
			t.Errorf("x=%v: Forecast(Target(%v)) = %v", tc.x, tc.y, got)
		}
		in := make([]float64, len(tc.x))
		LogChange.Input(in, tc.x)
		if in[len(in)-1] != 0 {
			t.Errorf("x=%v: last input %v, want 0", tc.x, in[len(in)-1])
		}
		// A zero output is the no-change forecast.
		if got := LogChange.Forecast(tc.x, 0); math.Abs(got-tc.x[len(tc.x)-1]) > 1e-9*math.Max(1, tc.x[len(tc.x)-1]) {
			t.Errorf("x=%v: Forecast(0) = %v, want the last input", tc.x, got)
		}
	}
	// Scale-free: (1+x)·k − 1 gives the same inputs and targets.
	x := []float64{9, 11, 14, 19}
	k := 37.0
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = (1+v)*k - 1
	}
	a, b := make([]float64, 4), make([]float64, 4)
	LogChange.Input(a, x)
	LogChange.Input(b, xs)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			t.Fatalf("inputs differ after scaling: %v vs %v", a, b)
		}
	}
}

func TestForecastBounded(t *testing.T) {
	x := []float64{10, 10, 10}
	for _, out := range []float64{math.NaN(), 1e6, -1e6} {
		got := LogChange.Forecast(x, out)
		if math.IsNaN(got) || got < 0 || got > 11*math.Exp(maxLogChange) {
			t.Errorf("Forecast(%v) = %v: want a bounded count", out, got)
		}
	}
	if got := LogChange.Forecast(x, math.NaN()); got != 10 {
		t.Errorf("Forecast(NaN) = %v, want the no-change 10", got)
	}
	if got := Counts.Forecast(x, -3); got != -3 {
		t.Errorf("Counts.Forecast passes the output through; got %v", got)
	}
}

// An anchored random initial model forecasts "no change" for every window,
// for a linear model and for one with hidden layers.
func TestInitAnchored(t *testing.T) {
	x := []float64{1, 2, 3, 4, 8, 8, 8, 9, 0, 0, 0, 5}
	for _, sizes := range [][]int{{4, 1}, {4, 16, 1}, {4, 8, 8, 1}} {
		m := nn.NewMLP(sizes...)
		p := make([]float64, m.NumParams())
		LogChange.InitRandom(m, p, newRand())
		got := make([]float64, 3)
		LogChange.Predict(m, p, x, got)
		want := make([]float64, 3)
		Persistence(x, want)
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("%v: anchored init forecasts %v, want persistence %v", sizes, got, want)
				break
			}
		}
		nonzero := 0
		for _, v := range p {
			if v != 0 {
				nonzero++
			}
		}
		if len(sizes) > 2 && nonzero == 0 {
			t.Errorf("%v: hidden layers must keep their random initialisation", sizes)
		}
		// Counts keeps the network's own initialisation, draw for draw,
		// with Init and InitRandom alike.
		q, r, u := make([]float64, m.NumParams()), make([]float64, m.NumParams()), make([]float64, m.NumParams())
		Counts.Init(m, q, newRand())
		Counts.InitRandom(m, u, newRand())
		m.Init(r, newRand())
		for i := range q {
			if q[i] != r[i] || u[i] != r[i] {
				t.Fatalf("%v: Counts.Init differs from MLP.Init at %d", sizes, i)
			}
		}
	}
}

func TestStackTransforms(t *testing.T) {
	areas := []series.Area{{Region: "A", Windows: []series.Window{
		{X: []float64{1, 3}, Y: 7}, {X: []float64{3, 7}, Y: 15},
	}}}
	x, y := LogChange.Stack(areas)
	wantX := []float64{math.Log(2) - math.Log(4), 0, math.Log(4) - math.Log(8), 0}
	wantY := []float64{math.Log(8) - math.Log(4), math.Log(16) - math.Log(8)}
	for i := range wantX {
		if math.Abs(x[i]-wantX[i]) > 1e-12 {
			t.Fatalf("x = %v, want %v", x, wantX)
		}
	}
	for i := range wantY {
		if math.Abs(y[i]-wantY[i]) > 1e-12 {
			t.Fatalf("y = %v, want %v", y, wantY)
		}
	}
	// The areas' own windows are untouched.
	if areas[0].Windows[0].X[0] != 1 || areas[0].Windows[1].Y != 15 {
		t.Fatal("Stack modified the areas")
	}
	cx, cy := Counts.Stack(areas)
	if cx[3] != 7 || cy[1] != 15 {
		t.Fatalf("Counts.Stack = %v %v", cx, cy)
	}
}

func TestDesigns(t *testing.T) {
	p, err := Preset("paper")
	if err != nil || p.Rounds != 75 || p.ExpectedClients(400) != 100 || p.ExpectedClients(60) != 60 ||
		p.LocalEpochs != 30 || p.Clip != 0.5 || p.LearningRate != 1e-3 || p.Features != Counts || p.Accountant != "rdp" ||
		len(p.Hidden) != 3 || p.Hidden[0] != 128 || p.Hidden[1] != 64 || p.Hidden[2] != 32 {
		t.Fatalf("paper preset = %+v, %v", p, err)
	}
	d, err := Preset("")
	if err != nil || d.Name != "default" || d.Features != LogChange || d.ExpectedClients(400) != 400 || d.ExpectedClients(7) != 7 {
		t.Fatalf("default preset = %+v, %v", d, err)
	}
	d.Hidden[0] = 99
	if Default.Hidden[0] == 99 {
		t.Fatal("Preset shares the Hidden slice with the package variable")
	}
	if _, err := Preset("fast"); err == nil {
		t.Fatal("unknown preset accepted")
	}
	half := Design{SampleRate: 0.5}
	if got := half.ExpectedClients(401); got != 201 {
		t.Fatalf("q=0.5 of 401 → m=%d, want 201", got)
	}
}

// Damping shrinks the forecast change in log terms; damping 1 is Predict.
func TestPredictDamped(t *testing.T) {
	m := nn.NewMLP(2, 1)
	p := []float64{0, 0, 0.4} // output 0.4 whatever the inputs
	x := []float64{10, 20}
	full, half := make([]float64, 1), make([]float64, 1)
	LogChange.Predict(m, p, x, full)
	LogChange.PredictDamped(m, p, x, half, 0.5)
	if want := math.Expm1(math.Log(21) + 0.4); math.Abs(full[0]-want) > 1e-9 {
		t.Errorf("undamped %v, want %v", full[0], want)
	}
	if want := math.Expm1(math.Log(21) + 0.2); math.Abs(half[0]-want) > 1e-9 {
		t.Errorf("damped %v, want %v", half[0], want)
	}
	for _, d := range []float64{0, -1, 1.01, math.NaN()} {
		if CheckDamping(d) == nil {
			t.Errorf("CheckDamping(%v) accepted", d)
		}
	}
	if CheckDamping(1) != nil || CheckDamping(0.25) != nil {
		t.Error("valid damping refused")
	}
}
