package metrics

import (
	"encoding/json"
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func TestCompute(t *testing.T) {
	cases := []struct {
		name    string
		y, yhat []float64
		want    Result
		tol     float64
	}{
		{
			name: "hand computed",
			// errors 1, -2, 0, 4; APE 10%, 10%, 0%, 10%
			y: []float64{10, 20, 30, 40}, yhat: []float64{9, 22, 30, 36},
			want: Result{N: 4, MSE: (1 + 4 + 0 + 16) / 4.0, MAE: 7 / 4.0, MAPE: 7.5, MdAPE: 10,
				// ybar 25, SS_tot 225+25+25+225=500, SS_res 21
				R2: 1 - 21.0/500},
			tol: 1e-12,
		},
		{
			name: "zero targets are dropped from MAPE and MdAPE only",
			y:    []float64{0, 10, 0, 20}, yhat: []float64{1, 12, -1, 15},
			// APE over y≠0: 20%, 25%; MSE (1+4+1+25)/4; MAE (1+2+1+5)/4
			want: Result{N: 4, MSE: 31 / 4.0, MAE: 9 / 4.0, MAPE: 22.5, MdAPE: 22.5, ZeroTargetsDropped: 2,
				// ybar 7.5, SS_tot 56.25+6.25+56.25+156.25=275, SS_res 31
				R2: 1 - 31.0/275},
			tol: 1e-12,
		},
		{
			name: "perfect",
			y:    []float64{1, 2, 3}, yhat: []float64{1, 2, 3},
			want: Result{N: 3, R2: 1},
			tol:  0,
		},
		{
			name: "all targets zero",
			y:    []float64{0, 0}, yhat: []float64{1, -1},
			want: Result{N: 2, MSE: 1, MAE: 1, MAPE: math.NaN(), MdAPE: math.NaN(), R2: math.NaN(), ZeroTargetsDropped: 2},
			tol:  0,
		},
		{
			name: "negative predictions are not clamped",
			y:    []float64{10, 30}, yhat: []float64{-10, 30},
			want: Result{N: 2, MSE: 200, MAE: 10, MAPE: 100, MdAPE: 100, R2: 1 - 400.0/200},
			tol:  1e-12,
		},
	}
	for _, c := range cases {
		got := Compute(c.y, c.yhat)
		if got.N != c.want.N || got.ZeroTargetsDropped != c.want.ZeroTargetsDropped ||
			!near(got.MSE, c.want.MSE, c.tol) || !near(got.MAE, c.want.MAE, c.tol) ||
			!near(got.MAPE, c.want.MAPE, c.tol) || !near(got.MdAPE, c.want.MdAPE, c.tol) ||
			!near(got.R2, c.want.R2, c.tol) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	// mean 5, sum of squares 32, n-1 = 7
	if !near(s.Mean, 5, 1e-15) || !near(s.SD, math.Sqrt(32.0/7), 1e-15) {
		t.Errorf("got %+v", s)
	}
	if s := Summarize([]float64{3}); s.Mean != 3 || s.SD != 0 {
		t.Errorf("one run: %+v", s)
	}
	if s := Summarize(nil); !math.IsNaN(s.Mean) {
		t.Errorf("no runs: %+v", s)
	}
}

func TestStrata(t *testing.T) {
	cases := []struct {
		pop  float64
		want int
	}{{0, 0}, {49999, 0}, {50000, 1}, {99999.5, 1}, {100e3, 2}, {199999, 2}, {200e3, 3}, {499999, 3}, {500e3, 4}, {3.6e6, 4}, {-1, -1}, {math.NaN(), -1}}
	for _, c := range cases {
		if got := StratumOf(c.pop); got != c.want {
			t.Errorf("StratumOf(%v) = %d, want %d", c.pop, got, c.want)
		}
	}
}

func TestMedianLeavesInput(t *testing.T) {
	x := []float64{3, 1, 2}
	if m := Median(x); m != 2 || x[0] != 3 {
		t.Errorf("Median = %v, input now %v", m, x)
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on mismatched lengths")
		}
	}()
	Compute([]float64{1}, []float64{1, 2})
}

func TestJSONNaNIsNull(t *testing.T) {
	r := Compute([]float64{0, 0}, []float64{1, 2})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":2,"mse":2.5,"mae":1.5,"mape":null,"mdape":null,"r2":null,"zero_targets_dropped":2}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.MAPE) || back.MSE != 2.5 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	s, _ := json.Marshal(Summary{Mean: 1.5, SD: math.NaN()})
	if string(s) != `{"mean":1.5,"sd":null}` {
		t.Errorf("summary: %s", s)
	}
}
