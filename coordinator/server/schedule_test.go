package server

import (
	"math"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A study with a noise schedule over real websockets: serve announces
// c_1 … c_T, releases round t with c_t, and every LHA checks each round's c
// against the schedule and recomputes the same ε.
func TestNoiseScheduleEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	seed := uint64(5)
	f := start(t, study.File{Settings: protocol.Settings{Name: "schedule", Epsilon: 4, Rounds: rounds, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 2, RoundLength: study.Duration(400 * time.Millisecond), NoiseSchedule: "linear:0.5"}}, lhaNames(n), &seed)
	cs := f.eng.Study.NoiseMultipliers
	if len(cs) != rounds || math.Abs(cs[rounds-1]-0.5*cs[0]) > 1e-9*cs[0] {
		t.Fatalf("announced schedule %v", cs)
	}
	l := startLHAs(t, nil, f, n, 3, nil)
	l.finish(t)
	want, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, f.eng.Config.SampleRate(), cs, f.file.Delta)
	if got := f.eng.EpsilonSpent(); math.Abs(got-want) > 1e-12 || !(got <= 4) {
		t.Errorf("coordinator ε %g, schedule %g", got, want)
	}
	for i, s := range l.sessions {
		log := s.Log()
		if len(log) != rounds || math.Abs(s.LocalEpsilon()-want) > 1e-12 {
			t.Fatalf("LHA %d: local ε %g (want %g), %d rounds", i, s.LocalEpsilon(), want, len(log))
		}
		for r, ev := range log {
			if ev.NoiseMultiplier != cs[r] {
				t.Errorf("LHA %d round %d: c=%v, schedule %v", i, r+1, ev.NoiseMultiplier, cs[r])
			}
		}
	}
}
