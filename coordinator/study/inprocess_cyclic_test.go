package study

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// The in-process driver runs cyclic FL as `fedcast simulate --strategy
// cyclic` does: the engine's cyclic state behind the Coordinator, every
// LHA in process. They are the tests the transport-free cyclic loop that
// simulate ran before (fl.CyclicSimulation, now removed) had, run on the
// driver.

// cyclicResearch opens a cyclic study of n LHAs × rounds rounds (E local
// steps, lr 0.01, network 4-16-8-1) with p and the noise schedule sched in
// research mode (seed 5), from an initial model drawn from seed 1;
// kind is the accountant ("": the default).
func cyclicResearch(t *testing.T, n, rounds, epochs int, p protocol.StrategyParams, sched string, kind privacy.AccountantKind) *Engine {
	t.Helper()
	p.Strategy = string(fl.Cyclic)
	eps := 3.0
	if p.Privacy == string(fl.ExampleLevel) {
		eps = 0
	}
	f, _, err := Create(CreateOptions{Names: names(n), Template: File{
		StrategyParams: p,
		Settings: protocol.Settings{Name: "cyclic in process", Epsilon: eps, Rounds: rounds, ExpectedClients: n, History: 4, Horizon: 2,
			Hidden: []int{16, 8}, LocalEpochs: epochs, LearningRate: 0.01, NoiseSchedule: sched, Accountant: kind,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	m := nn.NewMLP(f.Layers()...)
	init := make([]float64, m.NumParams())
	m.Init(init, fl.NewRand(1, fl.StreamInit))
	seed := uint64(5)
	e, err := OpenResearch(f, init, c, &seed, time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// localTrain is an InProcess.Train of LHAs with data that send
// fl.LocalUpdate (one trainer per worker), and records who trained in
// which turn.
func localTrain(e *Engine, data []fl.ClientData, turns map[int]int) func(w, lha, round int, global, dst []float64) bool {
	trainers := map[int]*nn.Trainer{}
	return func(w, lha, round int, global, dst []float64) bool {
		if trainers[w] == nil {
			trainers[w] = nn.NewTrainer(e.Model)
		}
		fl.LocalUpdate(trainers[w], global, data[lha].X, data[lha].Y, e.Config, dst)
		if turns != nil {
			turns[round] = lha
		}
		return true
	}
}

// TestInProcessCyclicOwnHandOffs: each turn goes to the LHA of the public
// order of the study file's hash (fl.CyclicTurn), every turn is released
// with its round's c_t, and each LHA's account holds exactly its own T
// hand-offs, not the N·T of the study: its ε is the exact composition of
// the schedule at q = 1, whether the study has 2 or 7 LHAs.
func TestInProcessCyclicOwnHandOffs(t *testing.T) {
	const rounds = 4
	for _, n := range []int{2, 7} {
		e := cyclicResearch(t, n, rounds, 3, protocol.StrategyParams{}, "linear:0.5", "")
		cs := e.Config.NoiseSchedule
		want, err := privacy.ScheduleEpsilon(e.Config.AccountantKind(), 1, cs, e.File.Delta)
		if err != nil || len(cs) != rounds {
			t.Fatalf("schedule %v: %v", cs, err)
		}
		turns := map[int]int{}
		var events []protocol.Event
		drv := &InProcess{Engine: e, Workers: 1, Train: localTrain(e, clientData(n, 4), turns),
			OnRound: func(ev protocol.Event, _ []float64) { events = append(events, ev) }}
		if _, err := drv.Run(context.Background()); err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		if len(events) != n*rounds || len(turns) != n*rounds {
			t.Fatalf("N=%d: %d turns released, %d trained; want T·N = %d", n, len(events), len(turns), n*rounds)
		}
		for i, ev := range events {
			k := i + 1
			r, _, lha := fl.CyclicTurn(e.Study.CyclicSeed, k, n)
			if ev.Round != k || ev.NoiseMultiplier != cs[r-1] || turns[k] != lha {
				t.Fatalf("N=%d turn %d: released %+v by LHA %d; want c=%v, LHA %d", n, k, ev, turns[k], cs[r-1], lha)
			}
		}
		for i := range n {
			if got := e.LHAHandOffs(i); got != rounds {
				t.Errorf("N=%d: LHA %d's account holds %d hand-offs, want its own %d (the study made %d)", n, i, got, rounds, n*rounds)
			}
			if got := e.LHAEpsilon(i); math.Abs(got-want) > 1e-12*want || !(got <= e.File.Epsilon) {
				t.Errorf("N=%d: LHA %d's ε = %v, want %v (≤ %v)", n, i, got, want, e.File.Epsilon)
			}
		}
		if e.EpsilonSpent() != e.LHAEpsilon(0) || e.Finished() != ReasonRounds {
			t.Errorf("N=%d: study ε %v (LHA 0's %v), finished %q", n, e.EpsilonSpent(), e.LHAEpsilon(0), e.Finished())
		}
		// Counting every hand-off of the study against each LHA would
		// spend far more: the accounting is not that.
		all := make([]float64, 0, n*rounds)
		for _, c := range cs {
			for range n {
				all = append(all, c)
			}
		}
		if everyone, _ := privacy.ScheduleEpsilon(e.Config.AccountantKind(), 1, all, e.File.Delta); !(everyone > want*math.Sqrt(float64(n))*0.9) {
			t.Errorf("N=%d: test premise: all hand-offs would give ε %v, own ones %v", n, everyone, want)
		}
	}
}

// TestInProcessCyclicLearns: without client-level noise cyclic training
// learns; LHAs that hand the model on unchanged (a zero update) leave it
// as it was after T·N turns.
func TestInProcessCyclicLearns(t *testing.T) {
	const n, rounds = 6, 15
	data := clientData(n, 4)
	example := protocol.StrategyParams{Privacy: string(fl.ExampleLevel), ExampleEpsilon: 2}
	e := cyclicResearch(t, n, rounds, 5, example, "", "")
	init := e.Global()
	tr := nn.NewTrainer(e.Model)
	loss := func(w []float64) (l float64) {
		for _, c := range data {
			l += tr.Loss(w, c.X, c.Y)
		}
		return l
	}
	w, err := (&InProcess{Engine: e, Train: localTrain(e, data, nil)}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !(loss(w) < 0.1*loss(init)) {
		t.Errorf("cyclic training did not learn: loss %v → %v", loss(init), loss(w))
	}
	e = cyclicResearch(t, n, rounds, 5, example, "", "")
	turns := 0
	w, err = (&InProcess{Engine: e, Workers: 1, Train: func(_, _, _ int, _, dst []float64) bool {
		turns++
		clear(dst)
		return true
	}}).Run(context.Background())
	if err != nil || turns != n*rounds || !slices.Equal(w, init) {
		t.Fatalf("%v; %d turns (want %d); model unchanged: %v", err, turns, n*rounds, slices.Equal(w, init))
	}
}

// TestInProcessCyclicExample: under local DP-SGD each LHA's own
// accountant holds exactly the steps of its own turns (E per round, E·T
// in all, whatever N), with the ε the central accountant gives for them;
// under privacy "both" the engine also keeps T hand-offs per LHA, under
// "example" none. An LHA whose setting was calibrated for fewer steps
// than E·T refuses its last turn: it sends nothing (not a dropout of the
// driver's: its own choice), the turn is missed (the model is handed on
// unchanged), and the study goes on.
func TestInProcessCyclicExample(t *testing.T) {
	const rounds, epochs = 3, 4
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		for _, tc := range []struct {
			n     int
			p     fl.Guarantee
			steps int
		}{{2, fl.ExampleLevel, rounds * epochs}, {5, fl.BothLevels, rounds * epochs}, {3, fl.ExampleLevel, rounds*epochs - 1}} {
			ex, err := fl.NewExampleDP(2, 1e-5, 0.5, 1, tc.steps, kind)
			if err != nil {
				t.Fatal(err)
			}
			e := cyclicResearch(t, tc.n, rounds, epochs, protocol.StrategyParams{Privacy: string(tc.p), ExampleEpsilon: 2}, "", kind)
			data := clientData(tc.n, 4)
			lhas := make([]*fl.Client, tc.n)
			for i := range lhas {
				if lhas[i], err = fl.NewClient(fl.Cyclic, 0, &ex); err != nil {
					t.Fatal(err)
				}
			}
			tr := nn.NewTrainer(e.Model)
			var released []protocol.Event
			drv := &InProcess{Engine: e, Workers: 1,
				Train: func(_, lha, k int, global, dst []float64) bool {
					_, err := lhas[lha].Update(tr, global, data[lha].X, data[lha].Y, e.Config, dst,
						fl.ClientRand(9, fl.StreamExampleBatches, lha, k), fl.ClientRand(9, fl.StreamExampleNoise, lha, k), nil)
					return err == nil
				},
				OnRound: func(ev protocol.Event, _ []float64) { released = append(released, ev) }}
			w, err := drv.Run(context.Background())
			name := func() string { return string(kind) + " " + string(tc.p) }
			if err != nil || fl.CheckUpdate(w, len(w)) != nil {
				t.Fatalf("%s N=%d: %v (or a non-finite model)", name(), tc.n, err)
			}
			short := tc.steps < rounds*epochs
			wantSteps := rounds * epochs
			if short {
				wantSteps = (rounds - 1) * epochs // the last turn did not fit
			}
			central, _ := privacy.EpsilonFor(kind, []privacy.Event{{SampleRate: ex.SampleRate, NoiseMultiplier: ex.NoiseMultiplier, Rounds: wantSteps}}, ex.Delta)
			for i, l := range lhas {
				evs := l.DPSGD.Accountant.Events
				if len(evs) != 1 || evs[0].Rounds != wantSteps || evs[0].NoiseMultiplier != ex.NoiseMultiplier || l.DPSGD.Spent() != central {
					t.Errorf("%s N=%d: LHA %d's accountant %v (ε %v), want its own %d steps (ε %v)", name(), tc.n, i, evs, l.DPSGD.Spent(), wantSteps, central)
				}
				if hand := e.LHAHandOffs(i); hand != map[bool]int{true: rounds, false: 0}[tc.p == fl.BothLevels] {
					t.Errorf("%s N=%d: LHA %d's hand-off account holds %d", name(), tc.n, i, hand)
				}
			}
			if drv.Dropped != 0 || (!short && (!(central <= 2) || central < 1.5)) {
				t.Errorf("%s N=%d: %d dropped; spent %v of a budget of 2 after the planned steps", name(), tc.n, drv.Dropped, central)
			}
			if len(released) != tc.n*rounds {
				t.Fatalf("%s N=%d: %d turns released, want T·N", name(), tc.n, len(released))
			}
			if !short {
				continue
			}
			for _, ev := range released[tc.n*(rounds-1):] {
				if prev := released[tc.n*(rounds-1)-1]; ev.ModelSHA256 != prev.ModelSHA256 {
					t.Fatalf("%s: missed turn %d changed the model", name(), ev.Round)
				}
			}
		}
	}
}

// TestInProcessCyclicLipschitz: a cyclic study of the Lipschitz design
// hands on models projected to spectral norm ≤ 1 in every layer, as a
// DP-FedAvg round releases them, whatever the LHAs send (here changes far
// above S, whose hand-offs would otherwise leave the bound).
func TestInProcessCyclicLipschitz(t *testing.T) {
	const n = 3
	design := model.LipschitzDesign
	f, _, err := Create(CreateOptions{Names: names(n), Design: &design, Template: File{
		StrategyParams: protocol.StrategyParams{Strategy: string(fl.Cyclic)},
		Settings:       protocol.Settings{Name: "publishable, cyclic", Epsilon: 8, Rounds: 2, ExpectedClients: n, Horizon: 7, Smoothing: "trailing"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	mlp := nn.NewMLP(f.Layers()...)
	init := make([]float64, mlp.NumParams())
	mlp.Init(init, fl.NewRand(1, fl.StreamInit))
	mlp.ProjectSpectral(init)
	seed := uint64(3)
	e, err := OpenResearch(f, init, c, &seed, time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Config.Spectral) == 0 {
		t.Fatal("the study's fl.Config does not project")
	}
	largest, released := 0.0, 0
	drv := &InProcess{Engine: e, Workers: 1,
		Train: func(_, _, _ int, _, dst []float64) bool {
			for i := range dst {
				dst[i] = 0.5 // ‖Δ‖ far above S before the coordinator's re-clip
			}
			return true
		},
		OnRound: func(ev protocol.Event, g []float64) {
			released++
			for l, s := range mlp.SpectralNorms(g) {
				largest = max(largest, s)
				if s > 1 {
					t.Errorf("turn %d: layer %d has spectral norm %v > 1", ev.Round, l+1, s)
				}
			}
		}}
	if _, err := drv.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if released != n*2 || largest < 0.5 {
		t.Errorf("%d turns released, largest norm %v: the check saw nothing", released, largest)
	}
}
