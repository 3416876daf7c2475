package model_test

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// The weekly design is a design like the others: its windows train through
// the federated path unchanged (client update, clipping, discrete Gaussian
// noise, the accountant's budget), and without noise that training lowers
// the loss on its windows.
func TestWeeklyTrainsThroughFL(t *testing.T) {
	d, areas, err := synth.Generate(synth.Options{Areas: 12, Seed: 5, Start: time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC), Days: 160})
	if err != nil {
		t.Fatal(err)
	}
	des := model.WeeklyDesign
	des.Rounds, des.LocalEpochs = 3, 10
	w := *des.Weekly
	byState := map[string][]*series.Region{}
	for i, r := range d.Regions {
		byState[areas[i].State] = append(byState[areas[i].State], r)
	}
	asOf := d.Regions[0].End()
	clients := make([]fl.ClientData, len(d.Regions))
	var X, Y []float64
	for i, r := range d.Regions {
		pub := model.Public{State: sum(byState[areas[i].State]), National: sum(d.Regions), Population: areas[i].Population}
		clients[i].X, clients[i].Y = w.Windows(r, pub, asOf)
		X, Y = append(X, clients[i].X...), append(Y, clients[i].Y...)
	}
	if len(Y) == 0 {
		t.Fatal("no windows")
	}
	m := des.Network()
	init := make([]float64, m.NumParams())
	des.Init(m, init, fl.NewRand(1, fl.StreamInit))
	N := len(clients)
	for _, dp := range []bool{true, false} {
		cfg := fl.Config{Clients: N, ExpectedClients: des.ExpectedClients(N), Rounds: des.Rounds, ClipNorm: des.Clip,
			LocalEpochs: des.LocalEpochs, LearningRate: 0.01, DP: dp}
		eps := math.Inf(1)
		if dp {
			cfg.NoiseMultiplier, eps = 2, 8
		}
		sim := &fltest.Simulation{Model: m, Initial: init, Config: cfg, Clients: clients, Epsilon: eps, Delta: 1e-5, Seed: 3, Workers: 1}
		srv, err := sim.Run(context.Background())
		if err != nil {
			t.Fatalf("dp=%v: %v", dp, err)
		}
		if srv.Round != des.Rounds || slices.Equal(srv.Global, init) {
			t.Fatalf("dp=%v: %d rounds, model changed %v", dp, srv.Round, !slices.Equal(srv.Global, init))
		}
		for _, v := range srv.Global {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("dp=%v: non-finite weight", dp)
			}
		}
		if dp {
			if e := srv.EpsilonSpent(); !(e > 0 && e <= eps) {
				t.Errorf("ε spent %v, budget %v", e, eps)
			}
			continue
		}
		tr := nn.NewTrainer(m)
		if before, after := tr.Loss(init, X, Y), tr.Loss(srv.Global, X, Y); !(after < before) {
			t.Errorf("non-private training: loss %v → %v, want lower", before, after)
		}
	}
}

func sum(rs []*series.Region) *series.Region {
	out := &series.Region{Name: "total", Start: rs[0].Start, Cases: make([]float64, len(rs[0].Cases))}
	for _, r := range rs {
		for i, v := range r.Cases {
			out.Cases[i] += v
		}
	}
	return out
}
