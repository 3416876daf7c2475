package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// lhas are LHAs of a test study, each running its session over a real
// websocket on its own synthetic area.
type lhas struct {
	sessions []*session.Session
	errs     []error
	wg       sync.WaitGroup
}

// startLHAs joins the first n LHAs of f and runs their sessions in the
// background, each on one area of a synthetic outbreak (seed dataSeed,
// 61 days), until ctx ends (nil: for at most a minute) or the study
// finishes; obs, when not nil, gives LHA i's observer.
func startLHAs(t *testing.T, ctx context.Context, f *fixture, n int, dataSeed uint64, obs func(i int) session.Observer) *lhas {
	t.Helper()
	data, _, err := synth.Generate(synth.Options{Areas: n, Seed: dataSeed, Days: 61})
	if err != nil {
		t.Fatal(err)
	}
	l := &lhas{sessions: make([]*session.Session, n), errs: make([]error, n)}
	for i := range n {
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i]}}
		sess, err := lhaconn.Join(context.Background(), f.http.URL+"/join#"+f.secrets.LHAs[i], "", nil)
		if err != nil {
			t.Fatal(err)
		}
		l.sessions[i] = sess
		var o session.Observer
		if obs != nil {
			o = obs(i)
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			ctx := ctx
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
			}
			l.errs[i] = sess.Run(ctx, one, o)
		}()
	}
	return l
}

// wait waits until every session has ended and returns their errors.
func (l *lhas) wait() []error {
	l.wg.Wait()
	return l.errs
}

// finish waits until every session has ended; an error fails the test.
func (l *lhas) finish(t *testing.T) {
	t.Helper()
	for i, err := range l.wait() {
		if err != nil {
			t.Fatalf("LHA %d: %v", i, err)
		}
	}
}
