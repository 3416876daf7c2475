package study

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
)

func TestCreateWithDesign(t *testing.T) {
	for _, tc := range []struct {
		preset   string
		n        int
		tmpl     File
		rounds   int
		m        int
		hidden   []int
		features string
		lr       float64
	}{
		{"default", 7, File{Settings: protocol.Settings{Epsilon: 1}}, 5, 7, []int{16}, "log-change", 0.001},
		{"paper", 400, File{Settings: protocol.Settings{Epsilon: 1}}, 75, 100, []int{128, 64, 32}, "counts", 0.001},
		{"paper", 30, File{Settings: protocol.Settings{Epsilon: 1}}, 75, 30, []int{128, 64, 32}, "counts", 0.001},
		// Fields set by hand win over the design.
		{"default", 7, File{Settings: protocol.Settings{Epsilon: 1, Rounds: 4, ExpectedClients: 3, LearningRate: 0.5}}, 4, 3, []int{16}, "log-change", 0.5},
	} {
		d, err := model.Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := Create(CreateOptions{Template: tc.tmpl, Names: names(tc.n), Design: &d})
		if err != nil {
			t.Fatalf("%s, N=%d: %v", tc.preset, tc.n, err)
		}
		if f.Rounds != tc.rounds || f.ExpectedClients != tc.m || f.Features != tc.features || f.LearningRate != tc.lr ||
			len(f.Hidden) != len(tc.hidden) || f.Hidden[0] != tc.hidden[0] || f.ClipNorm != 0.5 || f.LocalEpochs != 30 {
			t.Errorf("%s, N=%d: %+v", tc.preset, tc.n, f)
		}
		if st := f.Public(1, false); st.Features != tc.features || len(st.Layers) != len(tc.hidden)+2 {
			t.Errorf("%s: public study features %q layers %v", tc.preset, st.Features, st.Layers)
		}
	}
}

func TestFeaturesField(t *testing.T) {
	_, raw, _ := small(t, 4)
	// A file without the field means counts (files written before it).
	if f, err := Parse(raw); err != nil || f.Features != "" || f.Public(1, false).Features != "" {
		t.Fatalf("file without features: %v", err)
	}
	bad := strings.Replace(string(raw), `"name": "test"`, `"name": "test", "features": "logs"`, 1)
	if _, err := Parse([]byte(bad)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "features") {
		t.Errorf("unknown features: %v, want ErrConfig naming the field", err)
	}
	bad = strings.Replace(string(raw), `"name": "test"`, `"name": "test", "damping": 1.5`, 1)
	if _, err := Parse([]byte(bad)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "damping") {
		t.Errorf("damping 1.5: %v, want ErrConfig naming the field", err)
	}
	good := strings.Replace(string(raw), `"name": "test"`, `"name": "test", "damping": 0.5`, 1)
	if f, err := Parse([]byte(good)); err != nil || f.Public(1, false).Damping != 0.5 {
		t.Errorf("damping 0.5: %v", err)
	}
}

// A log-change study starts from the public model pretrained on synthetic
// outbreaks (model.Features.Init): the engine's initial model is
// model.Pretrained of its network, whatever the seed.
func TestAnchoredInitialModel(t *testing.T) {
	f, _, _ := small(t, 4)
	f.Features = string(model.LogChange)
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{3, 4} {
		e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "ledger.db"), &seed)
		want, err := model.Pretrained(e.Model)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(e.Global(), want) {
			t.Fatalf("seed %d: the initial model is not the pretrained one", seed)
		}
	}
}
