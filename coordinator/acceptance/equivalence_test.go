package acceptance

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// The paper's November 2020 setting (spec §3-§5).
const (
	novFrom, novTo = "2020-11-01", "2020-12-01"
	paperM         = 100
	paperEps       = 2.0
	paperDelta     = 1e-5
)

// referenceClients computes every county's training windows the way
// `fedcast simulate` does (series.MakeWindows over the whole dataset, then
// the temporal 90 % split per area), independently of the client code.
func referenceClients(t *testing.T, data *series.Dataset) []fl.ClientData {
	t.Helper()
	from, _ := time.Parse(time.DateOnly, novFrom)
	to, _ := time.Parse(time.DateOnly, novTo)
	areas, err := series.MakeWindows(data, series.WindowOptions{History: 10, Horizon: 7, Smoothing: series.Centered, From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	train, _ := series.SplitAreas(areas, series.Temporal, 0.9, nil)
	out := make([]fl.ClientData, len(train))
	for i, a := range train {
		if a.Region != data.Regions[i].Name {
			t.Fatalf("area %d is %s, region %s", i, a.Region, data.Regions[i].Name)
		}
		out[i].X, out[i].Y = series.Stack([]series.Area{a})
	}
	return out
}

// TestEquivalence400 runs the November 2020 study with 400 LHAs (one
// county each) through the real `fedcast serve --insecure-seed` process and
// 400 client sessions over loopback websockets, and checks the released
// models bit for bit against the study run in process with the same seed
// and study file: on study.InProcess (the same Coordinator over a loopback,
// the driver `fedcast simulate` runs) and on fltest.Simulation (the
// transport-free reference loop). Reduced: T = 3 rounds;
// FEDCAST_ACCEPTANCE=1: the paper's T = 75.
func TestEquivalence400(t *testing.T) {
	data, err := series.ReadFile(filepath.Join(dataDir(t), "county_cases_daily.csv"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(data.Regions)
	if n != 400 {
		t.Fatalf("%d counties, want 400", n)
	}
	rounds := 3
	if full() {
		rounds = 75
	}
	const seed = uint64(2020)
	ref := referenceClients(t, data)

	dir := t.TempDir()
	names := make([]string, n)
	for i, r := range data.Regions {
		names[i] = r.Name
	}
	studyPath, tokens, _ := studyNew(t, dir, names, "--preset", "paper",
		"--epsilon", fmt.Sprint(paperEps), "--delta", fmt.Sprint(paperDelta), "--rounds", fmt.Sprint(rounds),
		"--expected", fmt.Sprint(paperM), "--from", novFrom, "--to", novTo, "--round-length", "20s")
	state := filepath.Join(dir, "state")
	s := seed
	p := serve(t, studyPath, state, "127.0.0.1:0", &s)

	// 400 LHAs, each with its own county's whole series (the client cuts
	// the study window and smooths with the ±3 days around it).
	// Rounds run on a 20 s schedule (18 s to train): 3 rounds take a
	// minute, the paper's 75 take 25.
	ctx, cancel := withTimeout(45 * time.Minute)
	defer cancel()
	start := time.Now()
	sessions := make([]*session.Session, n)
	for i := range n {
		sess, err := lhaconn.Join(ctx, p.base+"/join#"+tokens[i], "", &session.Options{ReconnectMax: -1})
		if err != nil {
			t.Fatalf("LHA %s: join: %v", names[i], err)
		}
		sessions[i] = sess
		if sess.LHA() != names[i] {
			t.Fatalf("token %d joined as %q, want %q", i, sess.LHA(), names[i])
		}
	}
	st := sessions[0].Study()
	// Each LHA's windows (computed by the client code from its own CSV
	// rows) are exactly the reference windows of its county.
	for i := range n {
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
		x, y, err := session.TrainingData(st, one)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x, ref[i].X) || !slices.Equal(y, ref[i].Y) || len(y) != 12 {
			t.Fatalf("county %s: the client trains on %d windows, the simulation on %d (or they differ)", names[i], len(y), len(ref[i].Y))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	updates := make([]int, n)
	for i, sess := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
			errs[i] = sess.Run(ctx, one, session.Observer{Sent: func(o session.Outgoing) {
				if o.Type == "update" {
					updates[i]++
				}
			}})
		}()
	}
	wg.Wait()
	live := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("LHA %s: %v", names[i], err)
		}
	}
	fin, err := p.waitState(time.Minute, func(s serverStatus) bool { return s.State == protocol.StateFinished })
	if err != nil {
		t.Fatal(err)
	}
	if err := p.stop(); err != nil {
		t.Errorf("graceful stop: %v", err)
	}
	modelPath := filepath.Join(dir, "model.json")
	exp := exportLedger(t, state, modelPath)
	final := readModel(t, modelPath)

	// The in-process engine with the same seed and windows.
	q := float64(paperM) / float64(n)
	c, err := privacy.NoiseMultiplier(paperEps, paperDelta, q, rounds)
	if err != nil {
		t.Fatal(err)
	}
	if c != st.NoiseMultiplier || c != exp.NoiseMultiplier {
		t.Fatalf("noise multiplier: study %v, ledger %v, calibrated here %v", st.NoiseMultiplier, exp.NoiseMultiplier, c)
	}
	cfg := fl.Config{Clients: n, ExpectedClients: paperM, Rounds: rounds, ClipNorm: 0.5, NoiseMultiplier: c, DP: true, LocalEpochs: 30, LearningRate: 0.001}
	var simEvents []fl.Event
	sim := &fltest.Simulation{Model: nn.NewMLP(10, 128, 64, 32, 1), Config: cfg, Clients: ref, Epsilon: paperEps, Delta: paperDelta, Seed: seed,
		OnRound: func(ev fl.Event, global []float64) { simEvents = append(simEvents, ev) }}
	t0 := time.Now()
	res, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	simTime := time.Since(t0)
	inEvents, inFinal := inProcessReference(t, studyPath, seed, ref)
	if !slices.Equal(inFinal, res.Global) {
		t.Errorf("the in-process driver's final model differs from fltest.Simulation's")
	}
	for r, ev := range exp.Rounds {
		if r >= len(inEvents) || ev.ModelSHA256 != inEvents[r].ModelSHA256 || ev.Epsilon != inEvents[r].Epsilon {
			t.Errorf("round %d: the live ledger and the in-process driver released different rounds", r+1)
		}
	}

	wantEps, _ := privacy.Epsilon(q, c, rounds, paperDelta)
	differing, maxDiff := 0, 0.0
	for i, v := range final.Weights {
		if v != res.Global[i] {
			differing++
			maxDiff = math.Max(maxDiff, math.Abs(v-res.Global[i]))
		}
	}
	if differing > 0 || len(final.Weights) != len(res.Global) {
		t.Errorf("live final model differs from fltest.Simulation in %d of %d parameters (max |Δ| %g)", differing, len(res.Global), maxDiff)
	}
	if final.ModelSHA256 != protocol.HashHex(res.Global) || !final.Final || final.Round != rounds {
		t.Errorf("exported model: round %d final %t hash %s; simulation hash %s", final.Round, final.Final, final.ModelSHA256, protocol.HashHex(res.Global))
	}
	if len(exp.Rounds) != rounds || exp.Finished == nil || exp.Finished.Reason != "rounds" {
		t.Fatalf("ledger: %d rounds, finished %+v", len(exp.Rounds), exp.Finished)
	}
	for r, ev := range exp.Rounds {
		se := simEvents[r]
		if ev.Epsilon != se.Epsilon || ev.SampleRate != se.SampleRate || ev.NoiseMultiplier != se.NoiseMultiplier {
			t.Errorf("round %d: ledger (q %v, c %v, ε %v), simulation (q %v, c %v, ε %v)", r+1, ev.SampleRate, ev.NoiseMultiplier, ev.Epsilon, se.SampleRate, se.NoiseMultiplier, se.Epsilon)
		}
	}
	if d := math.Abs(exp.EpsilonSpent - wantEps); d > 1e-12 || math.Abs(fin.EpsilonSpent-wantEps) > 1e-12 || math.Abs(res.EpsilonSpent()-wantEps) > 1e-12 {
		t.Errorf("ε: ledger %v, status %v, simulation %v, privacy.Epsilon %v", exp.EpsilonSpent, fin.EpsilonSpent, res.EpsilonSpent(), wantEps)
	}
	totalUpdates := 0
	for i, sess := range sessions {
		totalUpdates += updates[i]
		if protocol.HashHex(sess.Model()) != final.ModelSHA256 {
			t.Errorf("LHA %s holds another final model", names[i])
		}
		if math.Abs(sess.LocalEpsilon()-wantEps) > 1e-12 {
			t.Errorf("LHA %s recomputed ε %v, want %v", names[i], sess.LocalEpsilon(), wantEps)
		}
	}
	writeResult(t, "equivalence400", map[string]any{
		"lhas": n, "rounds": rounds, "expected_clients": paperM, "seed": seed, "epsilon_budget": paperEps,
		"noise_multiplier": c, "epsilon_spent": exp.EpsilonSpent, "epsilon_expected": wantEps,
		"updates_sent": totalUpdates, "final_model_sha256": final.ModelSHA256, "simulation_sha256": protocol.HashHex(res.Global),
		"parameters_differing": differing, "live_seconds": live.Seconds(), "simulation_seconds": simTime.Seconds(),
	})
}

// inProcessReference runs the study file at path in process, as `fedcast
// simulate` runs a study: the engine opened on a MemStore in research
// mode with seed (so its initial model, sampling and noise are serve's
// with --insecure-seed), driven by study.InProcess, each LHA training on
// its reference windows. It returns the released rounds and the final
// model.
func inProcessReference(t *testing.T, path string, seed uint64, ref []fl.ClientData) ([]protocol.Event, []float64) {
	t.Helper()
	f, raw, err := study.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := study.Open(f, raw, &study.MemStore{}, &study.Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	trainers := make([]*nn.Trainer, 2)
	var events []protocol.Event
	drv := &study.InProcess{Engine: e, Workers: len(trainers),
		Train: func(w, lha, _ int, global, dst []float64) bool {
			if trainers[w] == nil {
				trainers[w] = nn.NewTrainer(e.Model)
			}
			fl.LocalUpdate(trainers[w], global, ref[lha].X, ref[lha].Y, e.Config, dst)
			return true
		},
		OnRound: func(ev protocol.Event, _ []float64) { events = append(events, ev) }}
	final, err := drv.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return events, final
}
