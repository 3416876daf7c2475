package e2e

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A small cyclic study on workerd with native `fedcast client`s: 3 LHAs ×
// 2 rounds = 6 turns, one per slot. Every turn is committed as a hand-off
// at the study's c with q = 1; each event's ε is that of its LHA's own
// hand-offs so far; every client ends after 6 turns with the coordinator's
// last model and the study's ε equal to the one it recomputed from its own
// two hand-offs.
func TestCyclicStudyEndToEnd(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := []string{"A", "B", "C"}
	const rounds, turns = 2, 6
	s := newStudy(t, names, addr, "--epsilon", "4", "--rounds", strconv.Itoa(rounds), "--strategy", "cyclic", "--round-length", "2s")
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	final := finishAll(t, startClients(t, s, names), names, turns)
	st := w.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	own := func(n int) float64 {
		eps, err := privacy.EpsilonFor(privacy.AccountantRDP, []privacy.Event{{SampleRate: 1, NoiseMultiplier: st.NoiseMultiplier, Rounds: n}}, st.Delta)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	if st.Round != turns || st.SampleRate != 1 || math.Abs(st.EpsilonSpent-own(rounds)) > 1e-9 || st.Turn != nil {
		t.Errorf("final status: %d turns, q=%v, ε %v (own %d hand-offs: %v), turn %+v", st.Round, st.SampleRate, st.EpsilonSpent, rounds, own(rounds), st.Turn)
	}
	var state storedState
	if err := w.get("/api/admin/state", s.admin, &state); err != nil {
		t.Fatal(err)
	}
	if len(state.Events) != turns {
		t.Fatalf("stored state has %d events, want %d turns", len(state.Events), turns)
	}
	for i, ev := range state.Events {
		// Every LHA takes one turn per round: turn k is its (⌈k/N⌉)-th hand-off.
		n := (i)/len(names) + 1
		if ev.Round != i+1 || ev.SampleRate != 1 || ev.NoiseMultiplier != st.NoiseMultiplier || math.Abs(ev.Epsilon-own(n)) > 1e-9 {
			t.Errorf("stored turn %d: %+v; want q=1, c=%v, ε of %d own hand-offs %v", i+1, ev, st.NoiseMultiplier, n, own(n))
		}
	}
	if h := protocol.HashHex(state.Model); h != final {
		t.Errorf("stored model %s, clients' %s", h, final)
	}
}
