package fl

import (
	"math"
	"slices"
	"testing"
)

func TestPull(t *testing.T) {
	w, g := []float64{1, 2}, []float64{3, -2}
	Pull(w, g, 0, 0.3)
	if !slices.Equal(w, []float64{1, 2}) {
		t.Errorf("λ = 0 moved w to %v", w)
	}
	Pull(w, g, 1/0.3, 0.3) // τλ = 1: halfway
	if math.Abs(w[0]-2) > 1e-15 || math.Abs(w[1]) > 1e-15 {
		t.Errorf("τλ = 1 gave %v, want [2 0]", w)
	}
	Pull(w, g, math.Inf(1), 0.3)
	if !slices.Equal(w, g) {
		t.Errorf("λ = inf gave %v, want w̄", w)
	}
	for _, bad := range []float64{-1, math.NaN()} {
		if CheckLambda(bad) == nil {
			t.Errorf("λ = %v accepted", bad)
		}
	}
}
