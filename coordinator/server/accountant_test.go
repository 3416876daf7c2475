package server

import (
	"context"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// A PLD study over real websockets: the clients learn the accountant from
// the study, check every released ε with PLD and recompute the same ε.
func TestPLDStudyEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	data, _, err := synth.Generate(synth.Options{Areas: n, Seed: 3, Days: 61})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(5)
	f := start(t, study.File{
		Settings: protocol.Settings{
			Name:            "pld",
			Epsilon:         4,
			Rounds:          rounds,
			ExpectedClients: 2,
			Hidden:          []int{4},
			LocalEpochs:     2,
			RoundLength:     study.Duration(400 * time.Millisecond),
			Accountant:      privacy.AccountantPLD,
		},
	}, lhaNames(n), &seed)
	if f.eng.Study.Accountant != "pld" {
		t.Fatalf("public study accountant %q", f.eng.Study.Accountant)
	}
	done := make(chan error, n)
	sessions := make([]*session.Session, n)
	for i := range n {
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
		sess, err := lhaconn.Join(context.Background(), f.http.URL+"/join#"+f.secrets.LHAs[i], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions[i] = sess
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			done <- sess.Run(ctx, one, session.Observer{})
		}()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	want, _ := privacy.EpsilonFor(privacy.AccountantPLD, []privacy.Event{{SampleRate: f.eng.Config.SampleRate(), NoiseMultiplier: f.eng.Config.NoiseMultiplier, Rounds: rounds}}, f.file.Delta)
	if got := f.eng.EpsilonSpent(); got != want {
		t.Errorf("coordinator ε %g, PLD %g", got, want)
	}
	for i, s := range sessions {
		log := s.Log()
		if s.LocalEpsilon() != want || len(log) != rounds || log[rounds-1].Accountant != "pld" || log[rounds-1].Epsilon != want {
			t.Errorf("LHA %d: local ε %g (want %g), log %+v", i, s.LocalEpsilon(), want, log)
		}
	}
}
