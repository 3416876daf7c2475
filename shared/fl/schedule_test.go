package fl

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A DP-FedAvg study with a noise schedule: it starts although its smallest
// c alone would not fit the budget, each round's event carries c_t, the ε
// spent after t rounds is the exact composition of c_1 … c_t, and the final
// ε meets the target.
func TestServerNoiseSchedule(t *testing.T) {
	const delta, budget, rounds = 1e-5, 1.0, 6
	base := Config{Clients: 40, ExpectedClients: 10, Rounds: rounds, ClipNorm: 0.5, DP: true, LocalEpochs: 1, LearningRate: 1e-3}
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		base.Accountant = kind
		sched, _ := privacy.ParseSchedule("step:3,0.6")
		cs, err := sched.Calibrate(kind, budget, delta, base.SampleRate(), rounds)
		if err != nil {
			t.Fatal(err)
		}
		cfg := base.WithSchedule(cs)
		if cfg.NoiseMultiplier != cs[rounds-1] || len(cfg.NoiseSchedule) != rounds {
			t.Fatalf("WithSchedule: c=%v, schedule %v", cfg.NoiseMultiplier, cfg.NoiseSchedule)
		}
		if err := (privacy.Params{Epsilon: budget, Delta: delta, SampleRate: cfg.SampleRate(), NoiseMultiplier: cfg.NoiseMultiplier,
			ClipNorm: 0.5, Rounds: rounds, Accountant: kind}).Validate(); !errors.Is(err, privacy.ErrBudgetExhausted) {
			t.Fatalf("test premise: the smallest c for all rounds should exceed the budget: %v", err)
		}
		s, err := NewServer(cfg, make([]float64, 3), budget, delta)
		if err != nil {
			t.Fatalf("%s: calibrated schedule refused: %v", kind, err)
		}
		for r := 1; r <= rounds; r++ {
			agg := NewAggregator(cfg.AtRound(r), 3)
			agg.Add([]float64{0.1, 0.2, 0.3})
			if r == 4 {
				// An aggregator made for another round's c is refused.
				if _, err := s.Propose(NewAggregator(cfg.AtRound(1), 3), NewRand(1, StreamNoise)); !errors.Is(err, ErrConfig) {
					t.Errorf("aggregator of round 1 accepted in round 4: %v", err)
				}
			}
			ev, err := s.Commit(agg, NewRand(uint64(r), StreamNoise))
			if err != nil {
				t.Fatalf("%s round %d: %v", kind, r, err)
			}
			want, _ := privacy.ScheduleEpsilon(kind, cfg.SampleRate(), cs[:r], delta)
			if ev.NoiseMultiplier != cs[r-1] || math.Abs(ev.Epsilon-want) > 1e-12*want {
				t.Errorf("%s round %d: event c=%v ε=%v, want c=%v ε=%v", kind, r, ev.NoiseMultiplier, ev.Epsilon, cs[r-1], want)
			}
		}
		if spent := s.EpsilonSpent(); !(spent <= budget) || spent < 0.999*budget {
			t.Errorf("%s: spent %v, want just within %v", kind, spent, budget)
		}
		// The state round-trips, and a tampered schedule is caught.
		b, _ := json.Marshal(s)
		var back Server
		if err := json.Unmarshal(b, &back); err != nil || back.EpsilonSpent() != s.EpsilonSpent() {
			t.Errorf("%s round trip: %v", kind, err)
		}
		if kind == privacy.AccountantRDP {
			bad := strings.Replace(string(b), `"noise_schedule":[`, `"noise_schedule":[9,`, 1)
			bad = strings.Replace(bad, `,`+jsonNum(cs[rounds-1])+`]`, `]`, 1)
			if err := json.Unmarshal([]byte(bad), &back); !errors.Is(err, ErrConfig) {
				t.Errorf("tampered schedule accepted: %v", err)
			}
		}
	}
}

func jsonNum(v float64) string { b, _ := json.Marshal(v); return string(b) }

func TestConfigScheduleValidate(t *testing.T) {
	ok := Config{Clients: 4, ExpectedClients: 2, Rounds: 3, ClipNorm: 0.5, DP: true, LocalEpochs: 1, LearningRate: 1e-3}.WithSchedule([]float64{3, 2, 1})
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"wrong length":        func(c *Config) { c.NoiseSchedule = c.NoiseSchedule[:2] },
		"c not the least":     func(c *Config) { c.NoiseMultiplier = 2 },
		"zero multiplier":     func(c *Config) { c.NoiseSchedule = []float64{3, 0, 1}; c.NoiseMultiplier = 0 },
		"NaN multiplier":      func(c *Config) { c.NoiseSchedule = []float64{3, math.NaN(), 1} },
		"schedule without DP": func(c *Config) { c.DP = false; c.NoiseMultiplier = 0 },
	} {
		c := ok
		c.NoiseSchedule = append([]float64(nil), ok.NoiseSchedule...)
		mod(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	if c := ok.WithSchedule([]float64{2, 2, 2}); c.NoiseSchedule != nil || c.NoiseMultiplier != 2 {
		t.Errorf("a constant schedule is a plain c: %+v", c)
	}
}
