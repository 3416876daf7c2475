package session

import (
	"reflect"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// TestEvaluateProgress: the progress of an evaluation only grows (pass,
// then areas done) and counts every area of the file in every pass, an
// area too short for a forecast too; it ends at N of N in its last pass,
// and reporting it does not change what is computed. (An area too short
// for the test days stops the evaluation in its last pass, with an
// error: the passes before it still end at N of N.)
func TestEvaluateProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		short    int // days of an extra area; 0: none
		complete bool
	}{
		{"every area usable", 0, true},
		{"one area too short", 12, false},
	} {
		t.Run(tc.name, func(t *testing.T) { checkEvaluateProgress(t, tc.short, tc.complete) })
	}
}

func checkEvaluateProgress(t *testing.T, short int, complete bool) {
	d, _, err := synth.Generate(synth.Options{Areas: 4, Days: 90, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if short > 0 {
		r := d.Regions[0]
		d.Regions = append(d.Regions, &series.Region{Name: "short", Start: r.Start, Cases: r.Cases[:short]})
	}
	n := len(d.Regions)
	st := protocol.Study{Layers: []int{10, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.8}}
	params := make([]float64, 11)
	params[9] = 1
	var seen []Progress
	ev, err := EvaluateProgress(st, d, params, nil, nil, func(p Progress) { seen = append(seen, p) })
	if (err == nil) != complete {
		t.Fatalf("error %v, want one: %v", err, !complete)
	}
	if len(seen) == 0 {
		t.Fatal("no progress reported")
	}
	passes := seen[0].Passes
	if passes < 2 {
		t.Fatalf("%d passes over the areas reported", passes)
	}
	ended := map[int]bool{}
	var prev Progress
	for i, p := range seen {
		if p.Passes != passes || p.Areas != n || p.Pass < 1 || p.Pass > passes || p.Done < 0 || p.Done > n {
			t.Fatalf("report %d: %+v (want %d passes of %d areas)", i, p, passes, n)
		}
		if i > 0 && (p.Pass < prev.Pass || p.Pass == prev.Pass && p.Done <= prev.Done) {
			t.Fatalf("report %d: %+v after %+v: progress went back or stood still", i, p, prev)
		}
		if i > 0 && p.Pass > prev.Pass && prev.Done != n {
			t.Fatalf("pass %d ended at %d of %d areas", prev.Pass, prev.Done, n)
		}
		if p.Done == n {
			ended[p.Pass] = true
		}
		prev = p
	}
	want := Progress{Pass: passes, Passes: passes, Done: n, Areas: n}
	if complete && (prev != want || len(ended) != passes) {
		t.Errorf("last report %+v, want %+v; passes ended: %v", prev, want, ended)
	}
	if !complete && (prev.Pass != passes || len(ended) != passes-1) {
		t.Errorf("stopped at %+v; passes ended: %v, want all but the last", prev, ended)
	}
	plain, err2 := EvaluateIssued(st, d, params, nil, nil)
	if (err2 == nil) != (err == nil) || !reflect.DeepEqual(plain, ev) {
		t.Error("the evaluation with progress differs from the one without")
	}
}
