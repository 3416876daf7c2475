package fl

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// cyclicExampleSim is a cyclic study of n toy clients over T rounds of E
// local steps with local DP-SGD at example-level ε = 2 calibrated for
// steps steps per client; dp switches the client-level hand-off noise on
// (privacy "both").
func cyclicExampleSim(t *testing.T, n, rounds, epochs, steps int, dp bool, kind privacy.AccountantKind) *CyclicSimulation {
	t.Helper()
	ex := mustExampleDP(t, 2, 1e-5, 0.5, 1, steps, kind)
	cfg := Config{Clients: n, ExpectedClients: n, Rounds: rounds, LocalEpochs: epochs, LearningRate: 1e-2, Accountant: kind}
	eps := math.Inf(1)
	if dp {
		c, err := privacy.NoiseMultiplierFor(kind, 4, 1e-5, 1, rounds)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DP, cfg.ClipNorm, cfg.NoiseMultiplier, eps = true, 0.5, c, 4
	}
	return &CyclicSimulation{Model: nn.NewMLP(4, 8, 1), Config: cfg, Clients: toyClients(n, rand.New(rand.NewPCG(7, uint64(n)))),
		Epsilon: eps, Delta: 1e-5, Seed: 3, Example: &ex}
}

// TestCyclicExampleAccountsOwnSteps: under example-level DP each client's
// own accountant holds exactly the DP-SGD steps of its own turns (E per
// round, E·T in all, whatever N), at the setting's (q_local, c_local), and
// its ε is the one the central accountant gives for the same (q, c,
// steps): privacy.EpsilonFor exactly, and for RDP privacy.Epsilon (the
// coordinator's constant-c path) within 1e-12. With privacy "both" the
// hand-off accounts are there too, T hand-offs per client, separately.
func TestCyclicExampleAccountsOwnSteps(t *testing.T) {
	const rounds, epochs = 3, 4
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		for _, n := range []int{2, 5} {
			for _, dp := range []bool{false, true} {
				sim := cyclicExampleSim(t, n, rounds, epochs, rounds*epochs, dp, kind)
				if n == 5 {
					sim.Clients[3] = ClientData{} // a client without windows spends nothing
				}
				w, acct, err := sim.Run(context.Background())
				if err != nil {
					t.Fatalf("%s N=%d dp=%v: %v", kind, n, dp, err)
				}
				if CheckUpdate(w, len(w)) != nil {
					t.Fatalf("%s N=%d dp=%v: non-finite model", kind, n, dp)
				}
				if len(sim.Locals) != n {
					t.Fatalf("%d local accountants for %d clients", len(sim.Locals), n)
				}
				ex := *sim.Example
				central, err := privacy.EpsilonFor(kind, []privacy.Event{{SampleRate: ex.SampleRate, NoiseMultiplier: ex.NoiseMultiplier, Rounds: rounds * epochs}}, ex.Delta)
				if err != nil {
					t.Fatal(err)
				}
				for i, l := range sim.Locals {
					want := []privacy.Event{{SampleRate: ex.SampleRate, NoiseMultiplier: ex.NoiseMultiplier, Rounds: rounds * epochs}}
					wantEps := central
					if n == 5 && i == 3 {
						want, wantEps = nil, 0
					}
					if len(l.Accountant.Events) != len(want) || (len(want) == 1 && l.Accountant.Events[0] != want[0]) {
						t.Errorf("%s N=%d dp=%v client %d: accountant %v, want its own %v", kind, n, dp, i, l.Accountant.Events, want)
					}
					if l.Spent() != wantEps {
						t.Errorf("%s N=%d dp=%v client %d: ε %v, central %v", kind, n, dp, i, l.Spent(), wantEps)
					}
				}
				if kind == privacy.AccountantRDP {
					rdp, _ := privacy.Epsilon(ex.SampleRate, ex.NoiseMultiplier, rounds*epochs, ex.Delta)
					if math.Abs(rdp-central) > 1e-12*rdp {
						t.Errorf("local ε %v, central RDP %v", central, rdp)
					}
				}
				if !(central <= 2) || central < 1.5 {
					t.Errorf("%s: spent %v of a budget of 2 after the planned steps", kind, central)
				}
				if dp {
					for i := range n {
						if acct == nil || acct.Turns(i) != rounds {
							t.Fatalf("%s N=%d both: client %d hand-offs %v, want %d", kind, n, i, acct, rounds)
						}
					}
				} else if acct != nil {
					t.Errorf("example only: hand-off accounts %v, want none (no client-level noise)", acct)
				}
			}
		}
	}
}

// TestCyclicExampleIsTheTurn: under privacy "example" the model handed on
// is exactly what the client's local DP-SGD made of the received one (no
// hand-off noise), and the same seed gives the same study; a setting
// calibrated for fewer steps than E·T is refused with the client's own
// budget error, and a Step with Example is a configuration error.
func TestCyclicExampleIsTheTurn(t *testing.T) {
	sim := cyclicExampleSim(t, 3, 2, 3, 6, false, privacy.AccountantRDP)
	var models [][]float64
	sim.OnRound = func(_ CyclicEvent, g []float64) { models = append(models, append([]float64(nil), g...)) }
	w1, _, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Replay by hand: the public order from StreamSampling, each turn by
	// a fresh LocalDPSGD per client with the same streams.
	order := NewRand(sim.Seed, StreamSampling)
	w := make([]float64, sim.Model.NumParams())
	sim.Model.Init(w, NewRand(sim.Seed, StreamInit))
	locals := make([]*LocalDPSGD, 3)
	for i := range locals {
		locals[i], _ = NewLocalDPSGD(*sim.Example)
	}
	tr := nn.NewTrainer(sim.Model)
	for r := 1; r <= 2; r++ {
		for _, i := range order.Perm(3) {
			d := sim.Clients[i]
			if err := locals[i].Train(tr, w, d.X, d.Y, 3, 1e-2, ClientRand(sim.Seed, StreamExampleBatches, i, r), ClientRand(sim.Seed, StreamExampleNoise, i, r), nil); err != nil {
				t.Fatal(err)
			}
		}
		for k := range w {
			if w[k] != models[r-1][k] {
				t.Fatalf("round %d: handed-on model differs from the clients' own DP-SGD at %d: %v vs %v", r, k, models[r-1][k], w[k])
			}
		}
	}
	w2, _, _ := sim.Run(context.Background())
	for k := range w1 {
		if w1[k] != w2[k] {
			t.Fatal("same seed, different study")
		}
	}

	short := cyclicExampleSim(t, 3, 2, 3, 5, false, privacy.AccountantRDP) // 5 < E·T = 6
	if _, _, err := short.Run(context.Background()); !errors.Is(err, privacy.ErrBudgetExhausted) || !errors.Is(err, ErrLocalBudget) {
		t.Errorf("a turn past the client's own budget: %v, want its budget refusal", err)
	}
	sim.Step = LocalTurn
	if _, _, err := sim.Run(context.Background()); !errors.Is(err, ErrConfig) {
		t.Errorf("Step and Example together: %v, want ErrConfig", err)
	}
}
