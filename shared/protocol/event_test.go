package protocol

import (
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

func TestEventOf(t *testing.T) {
	e := fl.Event{Round: 3, SampleRate: 0.25, NoiseMultiplier: 1.1, Epsilon: 0.9, Delta: 1e-5,
		Accountant: privacy.AccountantPLD, Gamma: 0.001, Sampler: privacy.SamplerName}
	ev, m := EventOf(e, "abc")
	want := Event{Round: 3, SampleRate: 0.25, NoiseMultiplier: 1.1, Epsilon: 0.9, Delta: 1e-5, ModelSHA256: "abc", Accountant: "pld"}
	if ev != want {
		t.Errorf("event %+v, want %+v", ev, want)
	}
	if m != (Mechanism{Gamma: 0.001, Sampler: privacy.SamplerName}) {
		t.Errorf("mechanism %+v", m)
	}
}

func TestNewModel(t *testing.T) {
	w := []float64{1, -2, 0.5}
	m := NewModel(4, true, []int{2, 1}, w)
	if m.ModelSHA256 != HashHex(w) || m.Round != 4 || !m.Final || len(m.Layers) != 2 {
		t.Fatalf("%+v", m)
	}
}
