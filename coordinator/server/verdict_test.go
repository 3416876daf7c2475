package server

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// The coordinator acknowledges every frame at once with the same reply and
// gives verdicts only at the release; the real client still learns which
// of its updates were counted: every update sent in time is reported
// counted (Observer.Accepted) with its round, none refused. (A training
// that overruns sends a dummy on time instead: coordinator/e2e
// TestOverrunSendsDummyOnTime.)
func TestClientLearnsVerdicts(t *testing.T) {
	const n, rounds = 3, 4
	f := start(t, study.File{Settings: protocol.Settings{Name: "verdicts", Epsilon: 8, Rounds: rounds, ExpectedClients: n, Hidden: []int{4},
		LocalEpochs: 2, RoundLength: study.Duration(500 * time.Millisecond)}}, lhaNames(n), nil)
	type record struct {
		mu             sync.Mutex
		sent, accepted []int
		errors         []*protocol.Error
	}
	recs := make([]*record, n)
	startLHAs(t, nil, f, n, 4, func(i int) session.Observer {
		rec := &record{}
		recs[i] = rec
		return session.Observer{
			Sent: func(o session.Outgoing) {
				if o.Type == "update" {
					rec.mu.Lock()
					rec.sent = append(rec.sent, o.Round)
					rec.mu.Unlock()
				}
			},
			Accepted: func(r int) { rec.mu.Lock(); rec.accepted = append(rec.accepted, r); rec.mu.Unlock() },
			Error:    func(e *protocol.Error) { rec.mu.Lock(); rec.errors = append(rec.errors, e); rec.mu.Unlock() },
		}
	}).finish(t)
	for i, rec := range recs {
		if len(rec.sent) == 0 || !slices.Equal(rec.sent, rec.accepted) || len(rec.errors) != 0 {
			t.Errorf("LHA %d: sent %v, counted %v, errors %v", i, rec.sent, rec.accepted, rec.errors)
		}
	}
}
