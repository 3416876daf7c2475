package study

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// scheduled is small(t, n) with a noise schedule.
func scheduled(t *testing.T, n int, spec string) (*File, []byte) {
	t.Helper()
	f, s, err := Create(CreateOptions{Names: names(n), Template: File{
		Settings: protocol.Settings{Name: "test", Epsilon: 3, Rounds: 6, ExpectedClients: n / 2, History: 4, Horizon: 2,
			Hidden: []int{8, 4}, LocalEpochs: 5, LearningRate: 0.01, NoiseSchedule: spec,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw
}

// A study with a noise schedule: the LHAs are told c_1 … c_T, every
// committed round carries its own c_t into the ledger, the study resumes
// after a restart (recomputing and checking the schedule), spends just
// within its budget, and equals the simulation of the same schedule bit
// for bit.
func TestNoiseScheduleStudy(t *testing.T) {
	const n, seed = 8, uint64(5)
	f, raw := scheduled(t, n, "linear:0.5")
	cs, err := f.CalibrateSchedule()
	if err != nil || len(cs) != f.Rounds {
		t.Fatalf("schedule %v, %v", cs, err)
	}
	if c, _ := f.Calibrate(); c != cs[f.Rounds-1] {
		t.Fatalf("Calibrate %v, want the smallest c_t %v", c, cs[f.Rounds-1])
	}
	data := clientData(n, f.History)
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := seed
	e := openEngine(t, f, raw, path, &s)
	if got := e.Study.NoiseMultipliers; len(got) != len(cs) || got[0] != cs[0] {
		t.Fatalf("public study announces %v, want %v", got, cs)
	}
	play(t, e, data, 2)
	ledgerOf(e).Close()
	e = openEngine(t, f, raw, path, &s)
	play(t, e, data, f.Rounds)
	rounds := ledgerState(t, e).Events
	if len(rounds) != f.Rounds {
		t.Fatalf("%d rounds in the ledger", len(rounds))
	}
	for i, r := range rounds {
		if r.NoiseMultiplier != cs[i] {
			t.Errorf("ledger round %d: c=%v, schedule c_%d=%v", r.Round, r.NoiseMultiplier, i+1, cs[i])
		}
	}
	want, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, f.SampleRate(), cs, f.Delta)
	if got := e.EpsilonSpent(); math.Abs(got-want) > 1e-12 || !(got <= f.Epsilon) || got < 0.999*f.Epsilon {
		t.Errorf("ε spent %v, schedule composes to %v, budget %v", got, want, f.Epsilon)
	}
	sim := &fltest.Simulation{Model: e.Model, Config: e.Config, Clients: data, Epsilon: f.Epsilon, Delta: f.Delta, Seed: seed, Workers: 1}
	srv, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range srv.Global {
		if w != e.Global()[i] {
			t.Fatalf("parameter %d: simulation %v, engine %v", i, w, e.Global()[i])
		}
	}
}

// A ledger whose round does not carry the schedule's c_t is refused on
// resume.
func TestNoiseScheduleResumeChecksRounds(t *testing.T) {
	f, raw := scheduled(t, 4, "step:3,0.5")
	path := filepath.Join(t.TempDir(), "l.db")
	s := uint64(1)
	e := openEngine(t, f, raw, path, &s)
	play(t, e, clientData(4, f.History), 1)
	ledgerOf(e).Close()
	if _, err := Open(f, raw, offSchedule{openLedger(t, path)}, &Options{InsecureSeed: &s}); !errors.Is(err, ErrMismatch) {
		t.Errorf("a round off the schedule was accepted on resume: %v", err)
	}
}

// offSchedule is a store whose first round claims another c.
type offSchedule struct{ Store }

func (o offSchedule) Load() (*State, error) {
	st, err := o.Store.Load()
	if st != nil && len(st.Events) > 0 {
		st.Events[0].NoiseMultiplier *= 0.9
	}
	return st, err
}

func TestNoiseScheduleFileChecks(t *testing.T) {
	_, raw, _ := small(t, 4)
	for _, c := range []struct{ to, want string }{
		{`"noise_schedule": "cosine:1",`, "noise_schedule"},
		{`"noise_schedule": "step:9,0.5",`, "noise_schedule"},
		{`"noise_schedule": "1,2",`, "noise_schedule"},
		{`"strategy": "cyclic",`, "strategy"},
		{`"strategy": "ring",`, "strategy"},
	} {
		bad := strings.Replace(string(raw), `"name": "test",`, `"name": "test", `+c.to, 1)
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.to, err)
		}
	}
	// A list over the budget is refused when the study is created.
	if _, _, err := Create(CreateOptions{Names: names(4), Template: File{Settings: protocol.Settings{Name: "x", Epsilon: 1, Rounds: 2, ExpectedClients: 2,
		NoiseSchedule: "0.5,0.5"}}}); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("over-budget list: %v", err)
	}
}
