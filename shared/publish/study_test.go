package publish

import (
	"errors"
	"math/rand/v2"
	"testing"

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
