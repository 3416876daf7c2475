package publish

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestStudyForecaster: a Lipschitz study's model becomes a forecaster of
// W−1 inputs whose network is the study network's first columns, projected;
// other designs and malformed layers are refused; ForStudy falls back to
// the public model for other designs and refuses a Lipschitz study with
// no model.
func TestStudyForecaster(t *testing.T) {
	layers := []int{15, 4, 1}
	full := nn.NewMLP(layers...)
	p := make([]float64, full.NumParams())
	full.Init(p, rand.New(rand.NewPCG(1, 1)))
	for i := range p {
		p[i] *= 10 // far beyond norm 1: StudyForecaster projects
	}
	f, err := StudyForecaster("lipschitz", layers, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Weeks != 3 || f.Damping != 1 || f.Net.In() != 2 || f.Kappa != DefaultKappa {
		t.Fatalf("forecaster: %d weeks, damping %v, %d inputs, κ %v", f.Weeks, f.Damping, f.Net.In(), f.Kappa)
	}
	for l, s := range f.Net.SpectralNorms(f.Params) {
		if s > 1 {
			t.Errorf("layer %d of the published network has norm %v", l+1, s)
		}
	}
	// The published network on z is the projected study network on (z, 0, …).
	q := append([]float64(nil), p...)
	full.ProjectSpectral(q)
	z := []float64{0.3, -0.2}
	in := make([]float64, 15)
	copy(in, z)
	a, b := []float64{0}, []float64{0}
	f.Net.Predict(f.Params, z, a)
	full.Predict(q, in, b)
	if a[0] != b[0] {
		t.Errorf("published network %v, study network %v", a[0], b[0])
	}
	for _, tc := range []struct {
		features string
		layers   []int
		n        int
	}{{"log-change", layers, len(p)}, {"lipschitz", []int{14, 4, 1}, nn.NewMLP(14, 4, 1).NumParams()},
		{"lipschitz", []int{15, 4, 2}, nn.NewMLP(15, 4, 2).NumParams()}, {"lipschitz", layers, len(p) - 1}} {
		if _, err := StudyForecaster(tc.features, tc.layers, 0.1, make([]float64, tc.n)); err == nil {
			t.Errorf("%s %v with %d parameters accepted", tc.features, tc.layers, tc.n)
		}
	}
	if _, err := StudyForecaster("counts", layers, 0.1, p); !errors.Is(err, ErrNotLipschitz) {
		t.Errorf("another design: %v, want ErrNotLipschitz", err)
	}
	st := protocol.Study{Layers: layers, Settings: protocol.Settings{Features: "lipschitz", Damping: 0.1}}
	if _, _, err := ForStudy(st, nil); !errors.Is(err, ErrNoModelYet) {
		t.Errorf("no model yet: %v", err)
	}
	if g, sha, err := ForStudy(st, p); err != nil || sha != protocol.HashHex(p) || g.Damping != 0.1 {
		t.Errorf("ForStudy: %v, %q", err, sha)
	}
	if g, sha, err := ForStudy(protocol.Study{Settings: protocol.Settings{Features: "log-change"}}, p); err != nil || sha != "" || g.Net.In() != 2 {
		t.Errorf("another design: %v, %q", err, sha)
	}
}

// TestStudyForecasterIsStudyModel: for study models whose output leaves
// the clamp (large output biases) as well as ordinary ones, at damping 0.1
// and 1, the publishable forecaster's median is the study model's own
// forecast (model.Lipschitz on the trailing weekly averages the LHA trains
// on), so the forecast an LHA publishes is its own forecast with noise.
func TestStudyForecasterIsStudyModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	layers := []int{model.LipschitzHistory, 8, 1}
	full := nn.NewMLP(layers...)
	h := model.LipschitzHistory
	clamped := 0
	for trial := range 60 {
		p := make([]float64, full.NumParams())
		full.Init(p, rng)
		full.ProjectSpectral(p)
		p[len(p)-1] = []float64{0, 2.5, -4, 40}[trial%4] // the output bias
		damping := []float64{0.1, 1}[trial/4%2]
		f, err := StudyForecaster("lipschitz", layers, damping, p)
		if err != nil {
			t.Fatal(err)
		}
		daily := history(rng, f.Days()+7)
		for i := range daily {
			daily[i] = max(0, daily[i]) // a case file has no negative counts
		}
		m, err := f.Median(daily)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, h)
		for i := range x {
			end := len(daily) - (h - 1 - i)
			for _, v := range daily[end-WeekDays : end] {
				x[i] += v / WeekDays
			}
		}
		got := []float64{0}
		model.Lipschitz.PredictDamped(full, p, x, got, damping)
		want := max(0, math.Exp(m)-DefaultKappa)
		if math.Abs(got[0]-want) > 1e-9*(1+want) {
			t.Fatalf("trial %d (damping %v): the study model forecasts %v, the publishable forecaster %v", trial, damping, got[0], want)
		}
		u, _ := f.Logs(daily)
		if math.Abs(m-u[0]) >= damping*MaxLogChange*(1-1e-12) {
			clamped++
		}
	}
	if clamped == 0 {
		t.Error("no trial reached the clamp: the test does not check the clamp's order")
	}
}
