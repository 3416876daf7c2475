package session

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A weekly study with a quantile head (7 outputs): its windows carry 7
// targets each, a capped round samples whole windows (inputs and their 7
// targets together), and its forecasts are the head's.
func TestPrepareWeeklyQuantileHead(t *testing.T) {
	st := weeklyStudy()
	w := *st.Weekly
	w.Quantiles = "head"
	st.Weekly, st.Outputs = &w, 7
	st.Layers = []int{w.Inputs(), 8, 7}
	st.Params = nn.NewMLP(st.Layers...).NumParams()
	d, pub := weeklyData(t)
	all, err := PrepareWeekly(st, d, pub, 0)
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := all.Round()
	if err != nil || all.Total() < 2*170 || len(y) != 7*all.Total() || len(x) != all.Total()*st.Layers[0] {
		t.Fatalf("%d windows: %d inputs, %d targets, %v", all.Total(), len(x), len(y), err)
	}
	capped, err := PrepareWeekly(st, d, pub, 50)
	if err != nil {
		t.Fatal(err)
	}
	cx, cy, _ := capped.Round()
	if len(cx) != 50*st.Layers[0] || len(cy) != 350 {
		t.Fatalf("capped round: %d inputs, %d targets", len(cx), len(cy))
	}
	// Each sampled window is one of the full set, with its own targets.
	in := st.Layers[0]
	for i := range 50 {
		found := false
		for j := range all.Total() {
			if slicesEqual(cx[i*in:(i+1)*in], x[j*in:(j+1)*in]) && slicesEqual(cy[i*7:(i+1)*7], y[j*7:(j+1)*7]) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("sampled window %d is not a window of the set with its targets", i)
		}
	}
	// The forecasts are the head's: its prior ranges before any training.
	m := nn.NewMLP(st.Layers...)
	params := make([]float64, m.NumParams())
	des, err := WeeklyDesign(st)
	if err != nil {
		t.Fatal(err)
	}
	des.Init(m, params, rand.New(rand.NewPCG(1, 2)))
	fc, err := WeeklyForecasts(st, d, pub, params)
	if err != nil || len(fc) != 2 {
		t.Fatalf("forecasts %v, %v", fc, err)
	}
	for _, f := range fc {
		q := f.Quantiles
		if !(q[0] < q[3] && q[3] < q[6]) {
			t.Errorf("%s: quantiles %v", f.Area, q)
		}
	}
	// A layout that does not end in the head's 7 outputs is refused.
	bad := st
	bad.Layers = []int{w.Inputs(), 8, 1}
	if _, err := WeeklyDesign(bad); err == nil {
		t.Error("a one-output layout accepted for a quantile head")
	}
}

// An LHA refuses a welcome whose network has several outputs unless it is
// a weekly design's quantile head: it would train nothing else with them
// (a hostile or mistaken study value stops with a clear error, not a
// crash in training).
func TestWelcomeRefusesOutputsWithoutHead(t *testing.T) {
	st := fakeStudy()
	if err := (&Session{}).welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateWaiting}); err != nil {
		t.Fatalf("one output refused: %v", err)
	}
	st.Outputs, st.Layers, st.Params = 7, []int{3, 7}, 28
	if err := (&Session{}).welcome(&protocol.Welcome{Study: st, LHA: "A", State: protocol.StateWaiting}); !errors.Is(err, ErrBadStudy) ||
		!strings.Contains(err.Error(), "7 outputs") {
		t.Errorf("7 outputs without a weekly head: %v, want ErrBadStudy", err)
	}
}
