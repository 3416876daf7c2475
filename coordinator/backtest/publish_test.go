package backtest

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/publish"
)

// TestPublishedReplay publishes a small replay: the published forecasts
// differ from the unpublished (noise), every area and origin has one, the
// per-person-year ε is the one asked for, the top-level scores stay the
// unpublished ones, and DIR/published mirrors DIR with the DP marking.
func TestPublishedReplay(t *testing.T) {
	d, states := fixture(t, 6)
	o := baseOptions(d, states, 2)
	o.Design = NewLipschitzDesign(1)
	o.Publish = &PublishOptions{Epsilon: 1, Delta: publish.DefaultDelta}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Published) != len(res.Origins) {
		t.Fatalf("%d published origins, want %d", len(res.Published), len(res.Origins))
	}
	differ := 0
	for i := range res.Published {
		for a, q := range res.Published[i] {
			if !q.Valid() {
				t.Fatalf("origin %d area %d: published %v is not a forecast", i, a, q)
			}
			if q.Median() != res.Forecasts[i][a].Median() {
				differ++
			}
		}
	}
	if differ < len(res.Origins)*len(res.Areas)/2 {
		t.Errorf("only %d published medians differ from the unpublished: no noise?", differ)
	}
	if e := res.PublishedEpsilon; e > 1 || e < 0.95 {
		t.Errorf("ε per person-year %v, want just below 1", e)
	}
	scored, err := Score(res, d)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarise("lipschitz", res, scored)
	if sum.Published, err = SummarisePublished(res, d); err != nil {
		t.Fatal(err)
	}
	if float64(sum.RelativeWIS) == sum.Published.RelativeWIS {
		t.Error("the published relative WIS equals the top-level one: the top level must stay unpublished")
	}
	dir := t.TempDir()
	plain, err := WriteHub(dir, "lipschitz", res)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := WritePublishedHub(dir, "lipschitz", res)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != len(plain)+1 {
		t.Fatalf("%d published files for %d hub files (want one more: dp.json)", len(pub), len(plain))
	}
	for _, f := range plain {
		g := filepath.Join(dir, "published", filepath.Base(f))
		a, b := must(os.ReadFile(f)), must(os.ReadFile(g))
		if strings.Count(string(a), "\n") != strings.Count(string(b), "\n") {
			t.Errorf("%s and %s have different row counts", f, g)
		}
	}
	mark := string(must(os.ReadFile(filepath.Join(dir, "published", "dp.json"))))
	if !strings.Contains(mark, `"differentially_private": true`) || !strings.Contains(mark, `"epsilon_per_person_year": 0.99`) {
		t.Errorf("dp.json lacks the marking: %s", mark)
	}
}

func TestPublishNeedsPublishableDesign(t *testing.T) {
	d, states := fixture(t, 2)
	o := baseOptions(d, states, 2)
	o.Publish = &PublishOptions{Epsilon: 1, Delta: publish.DefaultDelta}
	if _, err := Run(o); err == nil || !strings.Contains(err.Error(), "--preset lipschitz") {
		t.Errorf("publishing the default design: %v, want an error naming --preset lipschitz", err)
	}
}

// TestLipschitzReleasedModel: every released model's layers have spectral
// norm ≤ 1 after the projection, and the unpublished forecast is finite.
func TestLipschitzReleasedModel(t *testing.T) {
	ld := NewLipschitzDesign(3)
	p := make([]float64, ld.mlp.NumParams())
	ld.Init(p, nil)
	for i := range p {
		p[i] *= 40
	}
	f := ld.ReleasedForecaster(p)
	for l, s := range f.Net.SpectralNorms(f.Params) {
		if s > 1 {
			t.Errorf("layer %d: norm %v > 1 in the released forecaster", l, s)
		}
	}
	if math.IsNaN(f.Sensitivity()[0]) {
		t.Error("no sensitivity")
	}
}

// TestLipschitzLocalUpdateClipped: the design's own local steps (spectral
// normalisation) leave the update clipped to S exactly as fl.LocalUpdate
// does, and a client without windows sends zero.
func TestLipschitzLocalUpdateClipped(t *testing.T) {
	ld := NewLipschitzDesign(2)
	global := make([]float64, ld.mlp.NumParams())
	ld.Init(global, nil)
	x, y := make([]float64, 2*50), make([]float64, 50)
	for i := range y {
		x[2*i], x[2*i+1] = float64(i%7)/3, -float64(i%5)/2
		y[i] = 3 * x[2*i]
	}
	cfg := fl.Config{DP: true, ClipNorm: 0.01, LocalEpochs: 30, LearningRate: 0.01}
	dst := make([]float64, len(global))
	localUpdate(ld, nn.NewTrainer(ld.mlp), global, x, y, cfg, dst)
	if n := privacy.L2Norm(dst); n > cfg.ClipNorm*(1+1e-12) || n < cfg.ClipNorm/2 {
		t.Errorf("update norm %v, want clipped to %v", n, cfg.ClipNorm)
	}
	localUpdate(ld, nn.NewTrainer(ld.mlp), global, nil, nil, cfg, dst)
	if privacy.L2Norm(dst) != 0 {
		t.Error("no windows, yet a non-zero update")
	}
}

// TestSensitivityOfTrainedModel trains the design on a synthetic outbreak
// (the federated local step, as a campaign does), projects the model as
// every release is, and changes every day of every area's window by ±1
// case at many origins: the median never moves more than the public
// bound for that day's week.
func TestSensitivityOfTrainedModel(t *testing.T) {
	d, states := fixture(t, 4)
	ld := NewLipschitzDesign(4)
	params := make([]float64, ld.mlp.NumParams())
	ld.Init(params, nil)
	pub, err := forecast.NewPublicInputs(d, states, nil)
	if err != nil {
		t.Fatal(err)
	}
	known := day("2020-09-30")
	x, y, err := ld.Training(Until(d, known), pub.Until(known))
	if err != nil || len(y) == 0 {
		t.Fatalf("no training windows (%v)", err)
	}
	tr := nn.NewTrainer(ld.mlp)
	for range 5 {
		ld.LocalTrain(tr, params, x, y, fl.Config{LocalEpochs: 30, LearningRate: 0.05})
	}
	f := ld.ReleasedForecaster(params)
	if f.Net.LipschitzBound(f.Params) == 0 {
		t.Fatal("the trained network is constant: the test would not exercise it")
	}
	sens := f.Sensitivity()
	worst := 0.0
	for _, r := range d.Regions {
		for o := 0; o < 60; o += 3 {
			win := dailyUntil(r, known.AddDate(0, 0, -o), f.Days())
			m0, err := f.Median(win)
			if err != nil {
				t.Fatal(err)
			}
			for back := range f.Days() {
				i := len(win) - 1 - back
				for _, dv := range []float64{1, -1} {
					w := append([]float64(nil), win...)
					w[i] += dv
					m1, _ := f.Median(w)
					diff := math.Abs(m1 - m0)
					if diff > sens[back/WeekDays] {
						t.Fatalf("area %s, origin −%d, day %d back, %+v: moved %v > %v", r.Name, o, back, dv, diff, sens[back/WeekDays])
					}
					worst = max(worst, diff/sens[back/WeekDays])
				}
			}
		}
	}
	if worst == 0 {
		t.Error("no single-case change moved the median: the check checks nothing")
	}
	t.Logf("largest change %.3f of the bound (trained, projected network; norms %.3v)", worst, f.Net.SpectralNorms(f.Params))
}
