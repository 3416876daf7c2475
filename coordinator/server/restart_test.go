package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// life is one run of the coordinator on a ledger: a restart opens a new
// life on the same file.
type life struct {
	*fixture
	l       *ledger.Ledger
	ctx     context.Context
	started time.Time // just before Run was called
	stopped bool
}

func (x *life) stop(t *testing.T) {
	t.Helper()
	if x.stopped {
		return
	}
	x.stopped = true
	x.cancel()
	if err := <-x.done; err != nil && err != context.Canceled {
		t.Errorf("Run: %v", err)
	}
	x.srv.Close()
	x.http.Close()
	x.l.Close()
}

// openRound returns the open round's id, start time, sample and online
// count, or id 0 if no round is open.
func (x *life) openRound() (id int, started time.Time, sampled []int, online int) {
	x.srv.co.WithEngine(func(e *study.Engine) {
		if o := e.Current(); o != nil {
			id, started, sampled, online = o.ID, o.Started, slices.Clone(o.Sampled), o.Online
		}
	})
	return id, started, sampled, online
}

// waitRound polls until a round is open and returns it.
func (x *life) waitRound(t *testing.T, within time.Duration) (id int, started time.Time, sampled []int, online int) {
	t.Helper()
	end := time.Now().Add(within)
	for time.Now().Before(end) {
		if id, started, sampled, online = x.openRound(); id > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no round opened within %v", within)
	return
}

// TestRestartWaitsForReconnects restarts a study with committed rounds and
// checks when and how the next round opens: not before the quorum (all N
// here) is online again or the restart grace has passed, whichever comes
// first; and with the sample the seed gives for that round whoever is
// online (online counts decide when a round opens, never who is sampled).
func TestRestartWaitsForReconnects(t *testing.T) {
	const n, committed = 4, 2
	seed := uint64(5)
	file, secrets, err := study.Create(study.CreateOptions{Names: lhaNames(n), Template: study.File{Settings: protocol.Settings{Epsilon: 10, Rounds: 20,
		ExpectedClients: 2, Hidden: []int{4}, LocalEpochs: 1, RoundLength: study.Duration(2 * time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := file.Marshal()
	path := filepath.Join(t.TempDir(), "ledger.db")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	// The first life commits two rounds with nobody online.
	{
		l, err := ledger.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := study.Open(file, raw, l.Store(), &study.Options{InsecureSeed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		for range committed {
			if _, err := eng.Begin(nil); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Complete(); err != nil {
				t.Fatal(err)
			}
			if err := eng.Release(); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	// samples[r-1] is round r's sample for this seed.
	rng := fl.NewRand(seed, fl.StreamSampling)
	var samples [][]int
	for range 10 {
		samples = append(samples, fl.PoissonSample(n, file.SampleRate(), rng))
	}

	restart := func(grace time.Duration) *life {
		l, err := ledger.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := study.Open(file, raw, l.Store(), &study.Options{InsecureSeed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(&Options{Engine: eng, Ledger: l, Logger: quiet, RestartGrace: grace})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		x := &life{fixture: &fixture{srv: srv, http: httptest.NewServer(srv), eng: eng, secrets: secrets, file: file,
			done: make(chan error, 1), cancel: cancel}, l: l, ctx: ctx}
		t.Cleanup(func() { x.stop(t) })
		return x
	}
	run := func(x *life) {
		x.started = time.Now()
		go func() { x.done <- x.srv.Run(x.ctx) }()
	}

	t.Run("grace over with the quorum short", func(t *testing.T) {
		const grace = 700 * time.Millisecond
		x := restart(grace)
		for i := range n - 1 { // 3 of 4 online: below the quorum
			expect[*protocol.Welcome](readyRaw(t, x.fixture, secrets.LHAs[i]))
		}
		run(x)
		id, started, sampled, online := x.waitRound(t, 30*time.Second)
		if id != committed+1 {
			t.Fatalf("round %d opened, want %d", id, committed+1)
		}
		if waited := started.Sub(x.started); waited < grace {
			t.Errorf("round %d opened %v after the restart, before the %v grace, with the quorum short", id, waited, grace)
		}
		if !slices.Equal(sampled, samples[id-1]) {
			t.Errorf("round %d sampled %v; the seed's sample for it is %v", id, sampled, samples[id-1])
		}
		want := 0
		for _, i := range sampled {
			if i < n-1 {
				want++
			}
		}
		if online != want {
			t.Errorf("round %d: %d sampled LHAs online, want %d", id, online, want)
		}
		x.stop(t) // round 3 abandoned, never committed
	})

	t.Run("quorum back before the grace", func(t *testing.T) {
		x := restart(time.Hour)
		run(x)
		time.Sleep(300 * time.Millisecond)
		rounds, _ := x.srv.co.Progress()
		if id, _, _, _ := x.openRound(); id != 0 || rounds != committed {
			// Without the wait, rounds with nobody online commit at once,
			// one after the other: pure noise that spends the budget.
			t.Fatalf("round %d open and %d rounds committed with nobody online, within the grace (want none and %d)", id, rounds, committed)
		}
		var quorumAt time.Time
		for i := range n {
			if i == n-1 {
				quorumAt = time.Now() // the last LHA's hello cannot come before this
			}
			expect[*protocol.Welcome](readyRaw(t, x.fixture, secrets.LHAs[i]))
		}
		id, started, sampled, online := x.waitRound(t, 30*time.Second)
		if id != committed+1 {
			t.Fatalf("round %d opened, want %d (the abandoned round is redrawn)", id, committed+1)
		}
		if started.Before(quorumAt) {
			t.Errorf("round %d opened %v before the quorum was back", id, quorumAt.Sub(started))
		}
		if !slices.Equal(sampled, samples[id-1]) || online != len(sampled) {
			t.Errorf("round %d sampled %v with %d online; want the seed's %v, all online", id, sampled, online, samples[id-1])
		}
		x.stop(t)
	})

	t.Run("quorum online at the restart: no wait", func(t *testing.T) {
		x := restart(time.Hour)
		for i := range n {
			expect[*protocol.Welcome](readyRaw(t, x.fixture, secrets.LHAs[i]))
		}
		run(x)
		// With a grace of an hour, waiting for it would fail waitRound.
		id, started, _, _ := x.waitRound(t, 30*time.Second)
		if id != committed+1 {
			t.Errorf("round %d opened %v after the restart with the quorum online", id, started.Sub(x.started))
		}
		x.stop(t)
	})
}
