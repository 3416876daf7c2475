package fl

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseStrategyAndGuarantee(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want StrategyName
		ok   bool
	}{{"", FedAvg, true}, {"fedavg", FedAvg, true}, {"mrmtl", MRMTL, true}, {"cyclic", Cyclic, true}, {"FedAvg", "", false}, {"sgd", "", false}} {
		got, err := ParseStrategy(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   string
		want Guarantee
		ok   bool
	}{{"", ClientLevel, true}, {"client", ClientLevel, true}, {"example", ExampleLevel, true}, {"both", BothLevels, true}, {"user", "", false}} {
		got, err := ParseGuarantee(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseGuarantee(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestStrategyRegistry(t *testing.T) {
	for _, name := range StrategyNames() {
		st, err := LookupStrategy(name)
		if err != nil || st.Name() != name {
			t.Errorf("LookupStrategy(%q) = %v, %v", name, st, err)
		}
	}
	if st, err := LookupStrategy(""); err != nil || st.Name() != FedAvg {
		t.Errorf(`LookupStrategy("") = %v, %v; want FedAvg`, st, err)
	}
	_, err := LookupStrategy("sgd")
	if err == nil {
		t.Fatal("unknown strategy accepted")
	}
	for _, name := range StrategyNames() {
		if !strings.Contains(err.Error(), string(name)) {
			t.Errorf("unknown strategy: %v, want it to list %s", err, name)
		}
	}
}

// The strategies plan, configure and account their steps as the engine
// and the LHAs did before the interface.
func TestStrategyPlans(t *testing.T) {
	cfg := Config{Clients: 4, ExpectedClients: 4, Rounds: 3, ClipNorm: 0.5, NoiseMultiplier: 1.5, DP: true,
		LocalEpochs: 1, LearningRate: 0.01, NoiseSchedule: []float64{2, 1.5, 1.5}}
	seed := strings.Repeat("ab", 32)
	sample := func() []int { return []int{1, 3} }
	fedavg, mrmtl, cyclic := FedAvgStrategy{}, MRMTLStrategy{}, CyclicStrategy{}
	if r, who := fedavg.Plan(cfg, seed, 2, sample); r != 2 || len(who) != 2 || who[1] != 3 {
		t.Errorf("FedAvg plans round %d: %v", r, who)
	}
	if fedavg.Steps(cfg) != 3 || cyclic.Steps(cfg) != 12 {
		t.Errorf("steps: FedAvg %d, cyclic %d; want T=3 and T·N=12", fedavg.Steps(cfg), cyclic.Steps(cfg))
	}
	for k := 1; k <= cyclic.Steps(cfg); k++ {
		round, _, client := CyclicTurn(seed, k, cfg.Clients)
		if r, who := cyclic.Plan(cfg, seed, k, nil); r != round || len(who) != 1 || who[0] != client {
			t.Fatalf("turn %d: planned round %d, %v; the timetable says round %d, client %d", k, r, who, round, client)
		}
	}
	if c := fedavg.StepConfig(cfg, 1); c.NoiseMultiplier != 2 || c.ExpectedClients != 4 || c.NoiseSchedule != nil {
		t.Errorf("FedAvg round 1: %+v", c)
	}
	if c := cyclic.StepConfig(cfg, 2); c.NoiseMultiplier != 1.5 || c.Clients != 1 || c.ExpectedClients != 1 {
		t.Errorf("cyclic hand-off of round 2: %+v", c)
	}
	if evs := cyclic.Events(cfg, 3); len(evs) != 2 || evs[0].SampleRate != 1 || evs[1].Rounds != 2 {
		t.Errorf("cyclic events: %v", evs)
	}
	if evs := fedavg.Events(cfg, 3); len(evs) != 2 || evs[0].SampleRate != 1 || evs[0].NoiseMultiplier != 2 {
		t.Errorf("FedAvg events: %v", evs)
	}
	if fedavg.Personal() || !mrmtl.Personal() || cyclic.Personal() || fedavg.Sequential() || mrmtl.Sequential() || !cyclic.Sequential() {
		t.Error("Personal/Sequential: want only MR-MTL personal and only cyclic sequential")
	}
	bad := cfg
	bad.ExpectedClients = 2
	if cyclic.Check(bad) == nil || fedavg.Check(bad) != nil {
		t.Error("m < N: cyclic must refuse it, FedAvg accept it")
	}
}

// halfStep is a strategy of the test: FedAvg whose server keeps half the step.
type halfStep struct{ FedAvgStrategy }

func (halfStep) Combine(agg *Aggregator, next []float64, noise *rand.Rand) {
	start := append([]float64(nil), next...)
	agg.Finish(next, noise)
	for i, w := range start {
		next[i] = w + 0.5*(next[i]-w)
	}
}

// Server.Propose finishes a round through its strategy's Combine (nil:
// FedAvg's), with the privacy event of the round either way.
func TestServerCombinesThroughItsStrategy(t *testing.T) {
	cfg := Config{Clients: 4, ExpectedClients: 2, Rounds: 2, ClipNorm: 1, NoiseMultiplier: 1.2, DP: true, LocalEpochs: 1, LearningRate: 0.1}
	global := []float64{1, -2, 0.5}
	var out [2]*Pending
	for i, st := range []Strategy{nil, halfStep{}} {
		s, err := NewServer(cfg, append([]float64(nil), global...), 10, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		s.Strategy = st
		agg := NewAggregator(cfg.AtRound(1), len(global))
		if err := agg.Add([]float64{0.3, 0.1, -0.2}); err != nil {
			t.Fatal(err)
		}
		if out[i], err = s.Propose(agg, NewRand(9, StreamNoise)); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range global {
		if want := w + 0.5*(out[0].Global[i]-w); out[1].Global[i] != want {
			t.Errorf("weight %d: %v, want half of FedAvg's step, %v", i, out[1].Global[i], want)
		}
	}
	if out[0].Event != out[1].Event {
		t.Errorf("events differ: %+v and %+v (post-processing spends nothing more)", out[0].Event, out[1].Event)
	}
}
