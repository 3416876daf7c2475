package server

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A study with privacy "example" over real websockets: serve only
// averages (no client-level noise or ε), every round's event says
// guarantee "example", every LHA trains with local DP-SGD under its own
// accountant and stays within its example-level budget, and /api/status
// states the guarantee and the LHAs' budget instead of a client-level ε.
func TestExamplePrivacyEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	seed := uint64(5)
	f := start(t, study.File{StrategyParams: protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 2},
		Settings: protocol.Settings{Name: "example", Rounds: rounds, ExpectedClients: 2, Hidden: []int{4}, LocalEpochs: 2,
			RoundLength: study.Duration(400 * time.Millisecond)}}, lhaNames(n), &seed)
	if f.eng.Config.DP || f.eng.Study.Epsilon != 0 || f.eng.Study.NoiseMultiplier != 0 {
		t.Fatalf("study %+v, DP %v", f.eng.Study, f.eng.Config.DP)
	}
	l := startLHAs(t, nil, f, n, 3, nil)
	l.finish(t)
	if f.eng.Rounds() != rounds || f.eng.EpsilonSpent() != 0 {
		t.Fatalf("coordinator: %d rounds, client-level ε %v", f.eng.Rounds(), f.eng.EpsilonSpent())
	}
	for _, ev := range f.eng.Events() {
		if ev.Guarantee != "example" || ev.Epsilon != 0 || ev.NoiseMultiplier != 0 {
			t.Errorf("coordinator event %+v", ev)
		}
	}
	trained := 0
	for i, s := range l.sessions {
		if len(s.Log()) != rounds || s.LocalEpsilon() != 0 || !slices.Equal(s.GlobalModel(), f.eng.Global()) {
			t.Fatalf("LHA %d: %d rounds, client-level ε %v, same model %v", i, len(s.Log()), s.LocalEpsilon(), slices.Equal(s.GlobalModel(), f.eng.Global()))
		}
		b, ok := s.ExampleBudget()
		if !ok || b.Epsilon != 2 || !(b.Spent <= 2) || b.Steps%f.file.LocalEpochs != 0 || b.Steps > b.MaxSteps {
			t.Errorf("LHA %d: example-level budget %+v, %v", i, b, ok)
		}
		trained += b.Steps / f.file.LocalEpochs
	}
	// Every round samples exactly m = 2 LHAs (non-DP sampling), all online.
	if trained != 2*rounds {
		t.Errorf("%d LHA-rounds trained, want %d", trained, 2*rounds)
	}
	code, body := get(t, f.http.URL+"/api/status", "")
	var st protocol.Status
	if code != 200 || json.Unmarshal(body, &st) != nil {
		t.Fatalf("status %d: %s", code, body)
	}
	if st.Guarantee != "example" || st.ExampleEpsilon != 2 || st.EpsilonSpent != 0 || st.EpsilonBudget != 0 || st.NoiseMultiplier != 0 {
		t.Errorf("status %s", body)
	}
}
