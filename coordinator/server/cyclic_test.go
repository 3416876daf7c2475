package server

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A cyclic study over real websockets (serve's SQLite ledger, the LHAs'
// sessions), privacy "both": 4 LHAs × 3 rounds = 12 turns, one per slot
// of the schedule, each to the LHA of the public timetable; every turn is
// a hand-off at the study's c with q = 1; each LHA's own client-level ε
// (recomputed by its session) is the ε of its own 3 hand-offs, equal to
// the coordinator's account of it; each LHA's local DP-SGD took the steps
// of its own turns only; /api/status says whose turn it is and nothing
// more, and the study's ε is the largest of the LHAs'.
func TestCyclicEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	seed := uint64(5)
	f := start(t, study.File{StrategyParams: protocol.StrategyParams{Strategy: "cyclic", Privacy: "both", ExampleEpsilon: 4},
		Settings: protocol.Settings{Name: "cyclic", Epsilon: 8, Rounds: rounds, ExpectedClients: n, Hidden: []int{4}, LocalEpochs: 2,
			RoundLength: study.Duration(400 * time.Millisecond)}}, lhaNames(n), &seed)
	if !f.eng.Config.DP || f.eng.Study.SampleRate != 1 || f.eng.Study.CyclicSeed == "" || f.eng.Turns() != n*rounds {
		t.Fatalf("study %+v", f.eng.Study)
	}
	l := startLHAs(t, nil, f, n, 3, nil)
	// While the study runs, the status names the LHA whose turn it is.
	var seen protocol.Status
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		code, body := get(t, f.http.URL+"/api/status", "")
		if code != 200 || json.Unmarshal(body, &seen) != nil {
			t.Fatalf("status %d: %s", code, body)
		}
		if seen.Turn != nil {
			break
		}
	}
	if seen.Turn == nil || seen.Schedule == nil || seen.Schedule.Round < 1 {
		t.Fatalf("no turn in the status while the study ran: %+v", seen)
	}
	if _, _, lha, _ := f.eng.Turn(seen.Schedule.Round); seen.Turn.LHA != f.file.LHAs[lha].Name {
		t.Errorf("status says turn %d is %s's, the timetable says %s's", seen.Schedule.Round, seen.Turn.LHA, f.file.LHAs[lha].Name)
	}
	l.finish(t)
	if f.eng.Rounds() != n*rounds || f.eng.Finished() != study.ReasonRounds {
		t.Fatalf("coordinator: %d turns, finished %q", f.eng.Rounds(), f.eng.Finished())
	}
	c := f.eng.Study.NoiseMultiplier
	for _, ev := range f.eng.Events() {
		if ev.NoiseMultiplier != c || ev.SampleRate != 1 || ev.Guarantee != "" {
			t.Errorf("turn %+v: want a hand-off at c=%v, q=1", ev, c)
		}
	}
	own, err := privacy.EpsilonFor(f.eng.Config.AccountantKind(), []privacy.Event{{SampleRate: 1, NoiseMultiplier: c, Rounds: rounds}}, f.file.Delta)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range l.sessions {
		if len(s.Log()) != n*rounds || !slices.Equal(s.GlobalModel(), f.eng.Global()) {
			t.Fatalf("LHA %d: %d turns, same model %v", i, len(s.Log()), slices.Equal(s.GlobalModel(), f.eng.Global()))
		}
		if math.Abs(s.LocalEpsilon()-own) > 1e-9 || math.Abs(f.eng.LHAEpsilon(i)-own) > 1e-9 || f.eng.LHAHandOffs(i) != rounds {
			t.Errorf("LHA %d: ε %v here, %v at the coordinator (%d hand-offs); its own %d hand-offs give %v",
				i, s.LocalEpsilon(), f.eng.LHAEpsilon(i), f.eng.LHAHandOffs(i), rounds, own)
		}
		b, ok := s.ExampleBudget()
		if !ok || b.Steps != rounds*f.file.LocalEpochs || !(b.Spent <= 4) {
			t.Errorf("LHA %d: example-level budget %+v, want the %d steps of its own turns", i, b, rounds*f.file.LocalEpochs)
		}
	}
	code, body := get(t, f.http.URL+"/api/status", "")
	var st protocol.Status
	if code != 200 || json.Unmarshal(body, &st) != nil {
		t.Fatalf("status %d: %s", code, body)
	}
	if st.Turn != nil || math.Abs(st.EpsilonSpent-own) > 1e-9 || st.Round != n*rounds {
		t.Errorf("final status %s", body)
	}
}
