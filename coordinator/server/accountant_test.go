package server

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A PLD study over real websockets: the clients learn the accountant from
// the study, check every released ε with PLD and recompute the same ε.
func TestPLDStudyEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	seed := uint64(5)
	f := start(t, study.File{Settings: protocol.Settings{Name: "pld", Epsilon: 4, Rounds: rounds, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 2, RoundLength: study.Duration(400 * time.Millisecond), Accountant: privacy.AccountantPLD}}, lhaNames(n), &seed)
	if f.eng.Study.Accountant != "pld" {
		t.Fatalf("public study accountant %q", f.eng.Study.Accountant)
	}
	l := startLHAs(t, nil, f, n, 3, nil)
	l.finish(t)
	want, _ := privacy.EpsilonFor(privacy.AccountantPLD, []privacy.Event{{SampleRate: f.eng.Config.SampleRate(), NoiseMultiplier: f.eng.Config.NoiseMultiplier, Rounds: rounds}}, f.file.Delta)
	if got := f.eng.EpsilonSpent(); got != want {
		t.Errorf("coordinator ε %g, PLD %g", got, want)
	}
	for i, s := range l.sessions {
		log := s.Log()
		if s.LocalEpsilon() != want || len(log) != rounds || log[rounds-1].Accountant != "pld" || log[rounds-1].Epsilon != want {
			t.Errorf("LHA %d: local ε %g (want %g), log %+v", i, s.LocalEpsilon(), want, log)
		}
	}
}
