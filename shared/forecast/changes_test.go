package forecast

import (
	"math"
	"testing"
)

// TestChangesMerge: the largest changes of several series are the Merge
// of each series' own, so a caller may measure them one series at a time
// (and let the page paint in between).
func TestChangesMerge(t *testing.T) {
	all := []Series{
		{Smoothed: []float64{10, 12, 30, 31, 8}},
		{Smoothed: []float64{100, 50, 50, math.NaN(), 60}},
		{Smoothed: []float64{math.NaN(), 1}},
	}
	for _, p := range []int{1, 2, 3} {
		want := LargestChanges(all, p)
		got := LargestChanges(nil, p)
		if got.OK {
			t.Fatalf("p=%d: no series, yet OK", p)
		}
		for i := range all {
			got = got.Merge(LargestChanges(all[i:i+1], p))
		}
		if got != want {
			t.Errorf("p=%d: merged %+v, all at once %+v", p, got, want)
		}
	}
	if up := LargestChanges(all, 1).Up; up != 31.0/13 {
		t.Errorf("largest one-day rise %v, want 31/13 (12 → 30)", up)
	}
}
