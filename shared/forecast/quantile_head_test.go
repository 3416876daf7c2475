package forecast

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/model"
)

// A weekly forecaster with a quantile head: "head" gives the head's
// quantiles (model.Weekly.PredictQuantiles) and "mix" the mean on the log
// scale of those and the own errors' ranges around the same median: what
// the mix adds to the head is symmetric on the log scale, as the
// calibrator's normal ranges are, and not the head's skewed ones.
func TestWeeklyForecasterQuantileHead(t *testing.T) {
	start, r, pub := weeklyFixture()
	origin := start.AddDate(0, 0, 200)
	for _, mode := range []string{"head", "mix"} {
		des := model.WeeklyDesign
		w := *des.Weekly
		w.Quantiles = mode
		des.Weekly = &w
		m := des.Network()
		params := make([]float64, m.NumParams())
		des.Init(m, params, rand.New(rand.NewPCG(5, 6)))
		params[len(params)-1] += 0.4 // a wider upper tail than the prior's
		f := WeeklyForecaster{Design: des, Model: m, Params: params, Calib: WeeklyCalibrator()}
		q := f.Forecast(r, pub, origin)
		hq, ok := w.PredictQuantiles(m, params, r, pub, origin, des.Damping)
		if !ok || !q.Valid() {
			t.Fatalf("%s: quantiles %v, head %v", mode, q, hq)
		}
		if math.Abs(q.Median()-hq[3]) > 1e-9*hq[3] {
			t.Errorf("%s: median %v, the head's %v", mode, q.Median(), hq[3])
		}
		if mode == "head" {
			for i := range q {
				if q[i] != hq[i] {
					t.Errorf("head: level %v: %v, want the head's %v", Levels[i], q[i], hq[i])
				}
			}
			continue
		}
		// own = 2·ℓ(mix) − ℓ(head), level by level.
		var own [NumLevels]float64
		for i := range q {
			own[i] = 2*math.Log1p(q[i]) - math.Log1p(hq[i])
		}
		for i := range 3 {
			up, down := own[6-i]-own[3], own[3]-own[i]
			if math.Abs(up-down) > 1e-9 || !(up > 0) {
				t.Errorf("mix: the own ranges at level %v are not symmetric: %v above, %v below", Levels[i], up, down)
			}
		}
		if hup, hdown := math.Log1p(hq[6])-math.Log1p(hq[3]), math.Log1p(hq[3])-math.Log1p(hq[0]); math.Abs(hup-hdown) < 0.1 {
			t.Errorf("the head's ranges are symmetric (%v, %v): the test checks nothing", hup, hdown)
		}
	}
}
