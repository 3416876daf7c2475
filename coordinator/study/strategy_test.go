package study_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

func strategyFile(p protocol.StrategyParams) study.File {
	return study.File{StrategyParams: p,
		Settings: protocol.Settings{Name: "strategies", Epsilon: 3, Rounds: 4, ExpectedClients: 2, History: 4, Horizon: 2, Hidden: []int{4},
			LocalEpochs: 5, RoundLength: study.Duration(time.Minute)}}
}

// TestStudyFileStrategy: the study file's strategy, lambda, privacy and
// example_* fields reach the public study, with local DP-SGD calibrated
// for E·T steps; privacy "example" refuses a client-level epsilon.
func TestStudyFileStrategy(t *testing.T) {
	f, _, err := study.Create(study.CreateOptions{Names: []string{"A", "B", "C"},
		Template: strategyFile(protocol.StrategyParams{Strategy: "mrmtl", Lambda: 1, Privacy: "both", ExampleEpsilon: 5})})
	if err != nil {
		t.Fatal(err)
	}
	st := f.Public(1, false)
	if st.Strategy != "mrmtl" || st.Lambda != 1 || st.Privacy != "both" || st.ExampleEpsilon != 5 || st.ExampleSteps != 20 ||
		st.ExampleDelta != f.Delta || st.ExampleRate != fl.DefaultExampleSampleRate || !(st.ExampleNoiseMultiplier > 0) {
		t.Fatalf("public study %+v", st.StudyStrategy)
	}
	if _, err := st.NewClient(privacy.AccountantRDP); err != nil {
		t.Errorf("a client refuses the coordinator's calibration: %v", err)
	}
	b, _ := json.Marshal(f)
	back, err := study.Parse(b)
	if err != nil {
		t.Fatalf("the file does not parse back: %v\n%s", err, b)
	}
	if back.StrategyParams != f.StrategyParams {
		t.Errorf("round trip: %+v, want %+v", back.StrategyParams, f.StrategyParams)
	}
	for _, c := range []struct {
		p    protocol.StrategyParams
		want string
	}{
		{protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 5}, "client-level budget"}, // epsilon 3 given: "example" has none
		{protocol.StrategyParams{Privacy: "both"}, "example_epsilon"},
		{protocol.StrategyParams{Strategy: "mrmtl", Lambda: -1}, "lambda"},
		{protocol.StrategyParams{Strategy: "median"}, "strategy"},
	} {
		_, _, err := study.Create(study.CreateOptions{Names: []string{"A", "B", "C"}, Template: strategyFile(c.p)})
		if !errors.Is(err, study.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrConfig naming %q", c.p, err, c.want)
		}
	}
	// Files written before the fields: DP-FedAvg with client-level DP.
	f2, _, err := study.Create(study.CreateOptions{Names: []string{"A", "B"}, Template: strategyFile(protocol.StrategyParams{})})
	if err != nil {
		t.Fatal(err)
	}
	if s := f2.Public(1, false).StudyStrategy; s != (protocol.StudyStrategy{}) {
		t.Errorf("default strategy %+v", s)
	}
}
