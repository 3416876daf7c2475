package forecast

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// origins returns n weekly origins where the model misses by modelMiss
// and no change by baseMiss.
func origins(n int, modelMiss, baseMiss float64) []GuardOrigin {
	d := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var os []GuardOrigin
	for i := range n {
		os = append(os, GuardOrigin{Area: "a", InputEnd: d.AddDate(0, 0, 7*i), Model: 100 + modelMiss, NoChange: 100 - baseMiss, Actual: 100})
	}
	return os
}

func TestJudgeSwitch(t *testing.T) {
	for _, tc := range []struct {
		name        string
		os          []GuardOrigin
		want        Method
		wantOrigins int
		reason      string
	}{
		{"no origins", nil, MethodNoChange, 0, TooFewWeeks},
		{"7 weeks, model far better", origins(7, 1, 50), MethodNoChange, 7, TooFewWeeks},
		{"8 weeks, model better", origins(8, 1, 50), MethodModel, 8, "Headline: shared model."},
		{"8 weeks, no change better", origins(8, 50, 1), MethodNoChange, 8, "no change missed by 1 cases per day on average, the shared model by 50."},
		{"tie goes to no change", origins(9, 5, 5), MethodNoChange, 9, "Headline: no change."},
		{"same date twice counts once", append(origins(7, 1, 50), origins(1, 1, 50)...), MethodNoChange, 7, TooFewWeeks},
		{"NaN origins left out", append(origins(7, 1, 50), GuardOrigin{InputEnd: time.Unix(0, 0), Model: math.NaN()}), MethodNoChange, 7, TooFewWeeks},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge(tc.os)
			if j.Method != tc.want || j.Origins != tc.wantOrigins {
				t.Fatalf("Judge = %s on %d origins, want %s on %d", j.Method, j.Origins, tc.want, tc.wantOrigins)
			}
			h := Guard(j, 120, 100, Band{0, 1000})
			if want := map[Method]float64{MethodModel: 120, MethodNoChange: 100}[tc.want]; h.Value != want {
				t.Errorf("headline value %g, want %g", h.Value, want)
			}
			if r := h.Reason(); !strings.Contains(r, tc.reason) {
				t.Errorf("reason %q lacks %q", r, tc.reason)
			}
		})
	}
}

func TestPlausibleBandAndClamp(t *testing.T) {
	// A history that at most doubles (in value + 1) over 7 days and at
	// most halves.
	var sm []float64
	for i := range 60 {
		sm = append(sm, 99+float64(i%14)*100/13) // 99 … 199, up and down
	}
	sm = append(sm, math.NaN())
	hist := []Series{{Area: "a", Smoothed: sm}}
	b, ok := PlausibleBand(hist, 7, 760)
	if !ok {
		t.Fatal("no band")
	}
	if b.Hi > 761*2*GuardMargin || b.Hi < 761*1.3*GuardMargin-1 || b.Lo < 0 || b.Lo > 760 {
		t.Fatalf("band %+v around 760 is not within the history's changes times the margin", b)
	}
	// The issue's absurd forecast: 113,577 a day where the average was 760.
	j := Judge(origins(8, 1, 50)) // the model has earned the headline …
	h := Guard(j, 113577, 760, b)
	if !h.ModelClamped || h.Value != b.Hi || h.ModelShown != b.Hi || h.Model != 113577 {
		t.Fatalf("absurd forecast not clamped: %+v", h)
	}
	if !strings.Contains(h.Reason(), "113,577") || !strings.Contains(h.Reason(), "flagged") {
		t.Errorf("reason does not flag the clamp: %q", h.Reason())
	}
	// … and a plausible one passes unchanged, with no note.
	if h := Guard(j, 800, 760, b); h.ModelClamped || h.Value != 800 || h.ClampNote() != "" {
		t.Errorf("plausible forecast changed: %+v", h)
	}
	// Under no change the clamped model is still flagged beside it.
	if h := Guard(Judge(nil), math.NaN(), 760, b); !h.ModelClamped || h.Value != 760 {
		t.Errorf("NaN model forecast: %+v", h)
	}
	if q := b.ClampQuantiles(Quantiles{0, 1, 2, 1e9, 1e10, 1e11, 1e12}); q[6] != b.Hi || q[0] != b.Lo || !q.Valid() {
		t.Errorf("ClampQuantiles = %v", q)
	}
	if _, ok := PlausibleBand(nil, 7, 10); ok {
		t.Error("a band without history")
	}
}

func TestWeeklyOrigins(t *testing.T) {
	d := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	var os []GuardOrigin
	for i := range 30 {
		os = append(os, GuardOrigin{InputEnd: d.AddDate(0, 0, i)})
	}
	w := WeeklyOrigins(os)
	if len(w) != 5 || !w[0].InputEnd.Equal(d.AddDate(0, 0, 29)) || !w[4].InputEnd.Equal(d.AddDate(0, 0, 1)) {
		t.Fatalf("WeeklyOrigins: %d origins from %v", len(w), w[0].InputEnd)
	}
}

func ExampleCount() {
	fmt.Println(Count(113577.4), Count(12.34), Count(math.NaN()))
	// Output: 113,577 12.3 –
}
