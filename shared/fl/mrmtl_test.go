package fl

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// heteroClients returns n clients whose targets follow different laws
// (y = a_k·x_0 + b_k), so local training and FedAvg differ.
func heteroClients(n int, rng *rand.Rand) []ClientData {
	cs := make([]ClientData, n)
	for k := range cs {
		a, b := 2*rng.Float64()-1, rng.NormFloat64()
		var d ClientData
		for range 8 {
			for h := range 4 {
				v := rng.NormFloat64()
				d.X = append(d.X, v)
				if h == 0 {
					d.Y = append(d.Y, a*v+b)
				}
			}
		}
		cs[k] = d
	}
	return cs
}

func mrmtlSim(clients []ClientData, cfg Config, st StrategyName, lambda float64, ex *ExampleDP, workers int) *Simulation {
	eps := math.Inf(1)
	if cfg.DP {
		eps = 100
	}
	return &Simulation{Model: nn.NewMLP(4, 8, 1), Config: cfg, Clients: clients, Epsilon: eps, Delta: 1e-5,
		Seed: 5, Workers: workers, Strategy: st, Lambda: lambda, Example: ex}
}

func run(t *testing.T, s *Simulation) *Server {
	t.Helper()
	srv, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func dist(a, b []float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return privacy.L2Norm(d)
}

// TestMRMTLLambdaZeroIsLocalTraining: with λ = 0 each personal model is
// exactly what the client gets by training alone, round after round, from
// the initial model.
func TestMRMTLLambdaZeroIsLocalTraining(t *testing.T) {
	clients := heteroClients(6, rand.New(rand.NewPCG(1, 2)))
	cfg := Config{Clients: 6, ExpectedClients: 6, Rounds: 4, LocalEpochs: 7, LearningRate: 0.01}
	s := mrmtlSim(clients, cfg, MRMTL, 0, nil, 2)
	srv := run(t, s)
	init := make([]float64, s.Model.NumParams())
	s.Model.Init(init, NewRand(s.Seed, StreamInit))
	tr := nn.NewTrainer(s.Model)
	got := make([]float64, len(init))
	for k, d := range clients {
		w := slices.Clone(init)
		for range cfg.Rounds {
			tr.Train(w, d.X, d.Y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate})
		}
		s.PersonalModel(k, srv.Global, got)
		if !slices.Equal(got, w) {
			t.Fatalf("client %d: personal model differs from local training by %g", k, dist(got, w))
		}
	}
	if slices.Equal(srv.Global, init) {
		t.Error("the federated model did not move")
	}
}

// TestMRMTLLargeLambdaApproachesFedAvg: as λ grows, the federated model
// and every personal model approach FedAvg's model; λ = +Inf is FedAvg.
func TestMRMTLLargeLambdaApproachesFedAvg(t *testing.T) {
	clients := heteroClients(8, rand.New(rand.NewPCG(3, 4)))
	for _, dp := range []bool{false, true} {
		cfg := Config{Clients: 8, ExpectedClients: 8, Rounds: 5, LocalEpochs: 10, LearningRate: 0.05}
		if dp {
			cfg.DP, cfg.ClipNorm, cfg.NoiseMultiplier = true, 0.5, 0.8
		}
		fed := run(t, mrmtlSim(clients, cfg, FedAvg, 0, nil, 1)).Global
		prev := math.Inf(1)
		for _, lambda := range []float64{0, 1, 100, 1e4, 1e8, 1e12, math.Inf(1)} {
			s := mrmtlSim(clients, cfg, MRMTL, lambda, nil, 1)
			g := run(t, s).Global
			d := dist(g, fed)
			worst := 0.0
			p := make([]float64, len(g))
			for k := range clients {
				s.PersonalModel(k, g, p)
				worst = max(worst, dist(p, fed))
			}
			t.Logf("dp=%v λ=%g: ‖w̄ − w̄_FedAvg‖ = %.3g, max_k ‖w_k − w̄_FedAvg‖ = %.3g", dp, lambda, d, worst)
			// Monotone until the distance reaches the float32 rounding of
			// the trained parameters (about 1e-7 here): below 1e-6 it is
			// rounding, not the pull.
			if d > prev*(1+1e-9) && lambda >= 100 && d > 1e-6 {
				t.Errorf("dp=%v λ=%g: distance to FedAvg %g grew from %g", dp, lambda, d, prev)
			}
			prev = d
			switch {
			case math.IsInf(lambda, 1) && (d != 0 || worst != 0):
				t.Errorf("dp=%v λ=inf: not FedAvg (%g, %g)", dp, d, worst)
			case lambda == 1e12 && (d > 1e-6 || worst > 1e-6):
				t.Errorf("dp=%v λ=1e12: %g, %g from FedAvg, want < 1e-6", dp, d, worst)
			case lambda == 0 && d < 1e-3:
				t.Errorf("dp=%v λ=0 is within %g of FedAvg: the test data are not heterogeneous enough", dp, d)
			}
		}
	}
}

// TestMRMTLWithLocalDPSGD: MR-MTL and local DP-SGD together, alone and
// with client-level DP: the result does not depend on the workers, every
// client spends its example-level budget's planned steps and no more.
func TestMRMTLWithLocalDPSGD(t *testing.T) {
	clients := toyClients(6, rand.New(rand.NewPCG(5, 6)))
	for _, dp := range []bool{false, true} {
		cfg := Config{Clients: 6, ExpectedClients: 6, Rounds: 3, LocalEpochs: 4, LearningRate: 0.01}
		if dp {
			cfg.DP, cfg.ClipNorm, cfg.NoiseMultiplier = true, 0.5, 0.8
		}
		ex := mustExampleDP(t, 2, 1e-5, 0.5, 1, cfg.Rounds*cfg.LocalEpochs, privacy.AccountantRDP)
		a := mrmtlSim(clients, cfg, MRMTL, 1, &ex, 1)
		b := mrmtlSim(clients, cfg, MRMTL, 1, &ex, 3)
		ga, gb := run(t, a).Global, run(t, b).Global
		if !slices.Equal(ga, gb) {
			t.Errorf("dp=%v: 1 and 3 workers differ", dp)
		}
		want, _ := privacy.Epsilon(0.5, ex.NoiseMultiplier, cfg.Rounds*cfg.LocalEpochs, 1e-5)
		for k, c := range a.ClientStates {
			if c.DPSGD.Spent() != want || !(want <= 2) {
				t.Errorf("dp=%v client %d: spent %v, want %v ≤ 2", dp, k, c.DPSGD.Spent(), want)
			}
			if !slices.Equal(c.Personal, b.ClientStates[k].Personal) {
				t.Errorf("dp=%v client %d: personal models differ between worker counts", dp, k)
			}
		}
	}
	// A FedAvg study with local DP-SGD: the coordinator only averages.
	cfg := Config{Clients: 6, ExpectedClients: 6, Rounds: 2, LocalEpochs: 3, LearningRate: 0.01}
	ex := mustExampleDP(t, 1, 1e-5, 0.5, 1, 6, privacy.AccountantRDP)
	s := mrmtlSim(clients, cfg, FedAvg, 0, &ex, 2)
	run(t, s)
	for k, c := range s.ClientStates {
		if c.Personal != nil || c.DPSGD.Accountant.Steps() != 6 {
			t.Errorf("FedAvg client %d: personal %v, %d steps", k, c.Personal, c.DPSGD.Accountant.Steps())
		}
	}
}

func TestPull(t *testing.T) {
	w, g := []float64{1, 2}, []float64{3, -2}
	Pull(w, g, 0, 0.3)
	if !slices.Equal(w, []float64{1, 2}) {
		t.Errorf("λ = 0 moved w to %v", w)
	}
	Pull(w, g, 1/0.3, 0.3) // τλ = 1: halfway
	if math.Abs(w[0]-2) > 1e-15 || math.Abs(w[1]) > 1e-15 {
		t.Errorf("τλ = 1 gave %v, want [2 0]", w)
	}
	Pull(w, g, math.Inf(1), 0.3)
	if !slices.Equal(w, g) {
		t.Errorf("λ = inf gave %v, want w̄", w)
	}
	for _, bad := range []float64{-1, math.NaN()} {
		if CheckLambda(bad) == nil {
			t.Errorf("λ = %v accepted", bad)
		}
	}
}
