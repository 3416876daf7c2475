package protocol

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
)

func TestStrategyParamsCheck(t *testing.T) {
	for _, c := range []struct {
		p    StrategyParams
		want string // "" accepted
	}{
		{StrategyParams{}, ""},
		{StrategyParams{Strategy: "mrmtl", Lambda: 1}, ""},
		{StrategyParams{Privacy: "both", ExampleEpsilon: 5}, ""},
		{StrategyParams{Strategy: "mrmtl", Privacy: "both", ExampleEpsilon: 5, ExampleRate: 0.25, ExampleClip: 0.2, ExampleDelta: 1e-6}, ""},
		{StrategyParams{Strategy: "ditto"}, "strategy"},
		{StrategyParams{Strategy: "cyclic"}, ""},
		{StrategyParams{Strategy: "cyclic", Privacy: "example", ExampleEpsilon: 2}, ""},
		{StrategyParams{Strategy: "cyclic", Lambda: 1}, "lambda"},
		{StrategyParams{Strategy: "mrmtl", Lambda: -1}, "lambda"},
		{StrategyParams{Lambda: 2}, "lambda"},
		{StrategyParams{Privacy: "node"}, "privacy"},
		{StrategyParams{Privacy: "example", ExampleEpsilon: 1}, ""},
		{StrategyParams{Privacy: "example"}, "example_epsilon"},
		{StrategyParams{Privacy: "example", ExampleEpsilon: 1, ExampleRate: 1.5}, "example_rate"},
		{StrategyParams{Privacy: "both"}, "example_epsilon"},
		{StrategyParams{ExampleEpsilon: 3}, "example_"},
		{StrategyParams{Privacy: "both", ExampleEpsilon: 3, ExampleRate: 2}, "example_rate"},
		{StrategyParams{Privacy: "both", ExampleEpsilon: 3, ExampleClip: -1}, "example_clip"},
		{StrategyParams{Privacy: "both", ExampleEpsilon: 3, ExampleDelta: 1}, "example_delta"},
	} {
		err := c.p.CheckStrategy()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

func TestStudyStrategyCalibration(t *testing.T) {
	p := StrategyParams{Strategy: "mrmtl", Lambda: 1, Privacy: "both", ExampleEpsilon: 4}
	s, err := p.Calibrate(10, 30, 1e-5, privacy.AccountantRDP)
	if err != nil {
		t.Fatal(err)
	}
	if s.ExampleSteps != 300 || !(s.ExampleNoiseMultiplier > 0) || s.ExampleRate != fl.DefaultExampleSampleRate || s.ExampleClip != fl.DefaultExampleClip || s.ExampleDelta != 1e-5 {
		t.Fatalf("calibrated %+v", s)
	}
	b, _ := json.Marshal(s)
	for _, f := range []string{`"strategy":"mrmtl"`, `"lambda":1`, `"privacy":"both"`, `"example_epsilon":4`, `"example_noise_multiplier":`, `"example_steps":300`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("JSON %s lacks %s", b, f)
		}
	}
	c, err := s.NewClient(privacy.AccountantRDP)
	if err != nil {
		t.Fatal(err)
	}
	if c.Strategy != fl.MRMTL || c.Lambda != 1 || c.DPSGD == nil || c.DPSGD.Setting.Epsilon != 4 {
		t.Errorf("client %+v", c)
	}
	// A coordinator that sends too little noise for the announced budget
	// is refused by the client's own accountant.
	bad := s
	bad.ExampleNoiseMultiplier *= 0.8
	if _, err := bad.NewClient(privacy.AccountantRDP); err == nil {
		t.Error("a local DP-SGD setting over its own budget was accepted")
	}
	var none StudyStrategy
	if c, err := none.NewClient(privacy.AccountantRDP); err != nil || c.Strategy != fl.FedAvg || c.DPSGD != nil {
		t.Errorf("zero value: %+v, %v", c, err)
	}
}
