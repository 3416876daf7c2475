package study_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// exampleFile is a study with privacy "example": no client-level ε, each
// LHA's own example-level ε = 2.
func exampleFile(t *testing.T, n int) (*study.File, []byte) {
	t.Helper()
	tmpl := strategyFile(protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 2})
	tmpl.Epsilon = 0
	f, _, err := study.Create(study.CreateOptions{Names: names(n), Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = string(rune('A' + i))
	}
	return out
}

// TestExamplePrivacyRound: under privacy "example" the engine only
// averages: the released model is the previous one plus the mean of the
// updates the sampled LHAs sent, within float rounding (nothing
// re-clipped, even an update far above S, and no noise); each round's
// event says guarantee "example" with no client-level ε or c; the public
// study and status say so; the state round-trips through its bytes and
// resumes to the same model and log. A file that gives the coordinator a
// client-level budget or schedule under "example" is refused.
func TestExamplePrivacyRound(t *testing.T) {
	const n = 5
	f, raw := exampleFile(t, n)
	st := &study.MemStore{}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	e, err := study.Open(f, raw, st, &study.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if e.Config.DP || e.Study.NoiseMultiplier != 0 || e.Study.Epsilon != 0 || e.Study.Privacy != "example" ||
		!(e.Study.ExampleNoiseMultiplier > 0) || e.Study.ExampleSteps != f.Rounds*f.LocalEpochs {
		t.Fatalf("public study %+v (DP %v)", e.Study, e.Config.DP)
	}
	if _, err := e.Study.NewClient(privacy.AccountantRDP); err != nil {
		t.Errorf("an LHA refuses the announced local DP-SGD calibration: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 1; round <= 2; round++ {
		r, err := e.BeginAt(now, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Sampled) != f.ExpectedClients {
			t.Errorf("round %d sampled %v, want m=%d LHAs", round, r.Sampled, f.ExpectedClients)
		}
		before := slices.Clone(e.Global())
		want := slices.Clone(before)
		for k, lha := range r.Sampled {
			u := make([]float64, len(before))
			for i := range u {
				u[i] = rng.NormFloat64() * float64(10*(k+1)) // norms far above S = 0.5
			}
			if err := e.Submit(lha, r.ID, u); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				want[i] += u[i] / float64(len(r.Sampled))
			}
		}
		res, err := e.CompleteAt(func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(res.Weights[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("round %d parameter %d: released %v, mean of the updates %v", round, i, res.Weights[i], want[i])
			}
		}
		ev := res.Event
		if ev.Guarantee != "example" || ev.Epsilon != 0 || ev.NoiseMultiplier != 0 || ev.Round != round || ev.Delta != f.Delta {
			t.Errorf("round %d event %+v", round, ev)
		}
		if err := e.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if e.EpsilonSpent() != 0 {
		t.Errorf("client-level ε spent %v under privacy example", e.EpsilonSpent())
	}

	// The state round-trips through its bytes and resumes.
	b, err := st.S.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back study.State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if g := back.Events[1].Guarantee; g != "example" || back.Events[1].Epsilon != 0 {
		t.Errorf("stored event %+v", back.Events[1])
	}
	e2, err := study.Open(f, raw, &study.MemStore{S: &back}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Rounds() != 2 || !slices.Equal(e2.Global(), e.Global()) || !slices.Equal(e2.Events(), e.Events()) {
		t.Errorf("resumed: %d rounds, log %+v; want %+v", e2.Rounds(), e2.Events(), e.Events())
	}
	// A stored round that claims a client-level ε is refused on resume.
	bad := back.Clone()
	bad.Events[0].Epsilon = 1
	if _, err := study.Open(f, raw, &study.MemStore{S: bad}, nil); !errors.Is(err, study.ErrMismatch) {
		t.Errorf("resume with a client-level ε recorded: %v, want ErrMismatch", err)
	}

	for _, c := range []struct {
		eps      float64
		schedule string
	}{{3, ""}, {0, "linear:2"}} {
		tmpl := strategyFile(protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 2})
		tmpl.Epsilon, tmpl.NoiseSchedule = c.eps, c.schedule
		_, _, err := study.Create(study.CreateOptions{Names: names(3), Template: tmpl})
		if !errors.Is(err, study.ErrConfig) || !strings.Contains(err.Error(), "example_epsilon") {
			t.Errorf("privacy example with epsilon %v, schedule %q: %v", c.eps, c.schedule, err)
		}
	}
	tmpl := strategyFile(protocol.StrategyParams{Privacy: "example"})
	tmpl.Epsilon = 0
	if _, _, err := study.Create(study.CreateOptions{Names: names(3), Template: tmpl}); !errors.Is(err, study.ErrConfig) {
		t.Errorf("privacy example without example_epsilon: %v", err)
	}
}
