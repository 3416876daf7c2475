package study

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// # In process: the round driver of simulate and backtest
//
// [InProcess] runs a study's rounds with every LHA in this process: the
// same [Coordinator] that `fedcast serve` and the worker drive (the
// schedule, round_start, the window, the commit to the store, the
// release), on a virtual clock and a loopback [Transport], with the LHAs'
// training done by a function of the caller. Nothing goes through a
// network. `fedcast simulate` (coordinator/experiment) and `fedcast
// backtest` run their studies this way; the acceptance tests check that a
// live study over websockets releases the same models bit for bit.

// OpenResearch opens f as a study held in memory (a [MemStore]) for the
// in-process driver: its genesis holds the initial model init and the
// noise multiplier c, so that the engine draws and calibrates nothing
// itself. With seed, sampling and noise come from fl.NewRand(*seed, …)
// (research mode, reproducible: never for a release); without, from
// privacy.NewSecureRand. start is the study's creation and the engine's
// clock. f is used as given (no Defaults, no Validate: the caller has
// checked its own setting).
func OpenResearch(f *File, init []float64, c float64, seed *uint64, start time.Time) (*Engine, error) {
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("study: in-process study file: %w", err)
	}
	sum := sha256.Sum256(raw)
	st := &MemStore{}
	g := &Genesis{Study: raw, StudySHA256: hex.EncodeToString(sum[:]), NoiseMultiplier: c,
		Clients: len(f.LHAs), Model: init, InsecureSeed: seed != nil, Created: start}
	if err := st.Init(g); err != nil {
		return nil, err
	}
	return Open(f, raw, st, &Options{InsecureSeed: seed, Now: func() time.Time { return start }})
}

// InProcess drives an Engine's Coordinator with all its LHAs in this
// process (see the section above). Every LHA joins and says ready at
// Start, so the start quorum is reached at once; each round, the LHAs the
// round_start picks train (Train) and send their updates as binary frames
// before the window closes; the round_result each release broadcasts is
// handed to OnRound. The result depends on the engine's randomness and
// Train only, never on Workers or Pool: updates are computed
// independently, and a research-mode engine sums them in LHA order.
type InProcess struct {
	// Engine is the study (OpenResearch, or Open on a MemStore). Required.
	Engine *Engine
	// Train computes LHA lha's update for round (1-based) from the
	// global model it received into dst, on worker w (0 ≤ w < Workers: a
	// caller keeps one nn.Trainer per worker). false: the LHA sends
	// nothing this round (its own budget refused). Required.
	Train func(w, lha, round int, global, dst []float64) bool
	// Workers is the most goroutines training at once; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// Pool, if set, is shared with other drivers running at the same time
	// (fl.Pool): the goroutine calling Run must hold a slot of its own,
	// and each round takes free slots for helpers.
	Pool *fl.Pool
	// OnRound, if set, receives each released round's event and model
	// (which must not be retained or modified).
	OnRound func(ev protocol.Event, global []float64)
	// Start is the virtual time the study starts at (zero: the Unix epoch).
	Start time.Time
	// Dropped counts, after Run, the updates that were not counted: not
	// finite (no frame can carry them: the LHA sends nothing, as a live
	// LHA whose training diverged), or refused by the coordinator. They
	// are dropouts, as in a live study.
	Dropped int
}

// Run drives the study until it finishes (all rounds, or the budget)
// and returns the engine's final model. It stops with ctx's error when ctx
// is cancelled (the open round is abandoned).
func (p *InProcess) Run(ctx context.Context) ([]float64, error) {
	if p.Engine == nil || p.Train == nil {
		return nil, errors.New("study: InProcess needs an Engine and a Train function")
	}
	n := len(p.Engine.File.LHAs)
	t := p.Start
	if t.IsZero() {
		t = time.Unix(0, 0).UTC()
	}
	tr := &loopback{n: n}
	c, err := NewCoordinator(p.Engine, DriverOptions{Transport: tr}, t)
	if err != nil {
		return nil, err
	}
	ignore := func(protocol.Kind, []byte) {}
	for lha := range n {
		if err := c.Join(lha, t, func([]Msg) {}); err != nil {
			return nil, err
		}
		c.Ready(lha, t, ignore)
	}
	w := &inWorkers{p: p}
	w.init()
	for {
		if err := ctx.Err(); err != nil {
			c.Stop()
			return nil, err
		}
		next, err := c.Tick(t)
		if err != nil {
			return nil, err
		}
		if err := p.deliver(c, tr, w, t); err != nil {
			return nil, err
		}
		if next.Finished {
			_, _, _, global := c.Committed()
			return global, nil
		}
		if next.At.IsZero() || !next.At.After(t) {
			return nil, fmt.Errorf("study: in-process driver: the schedule is stuck at %v", t)
		}
		t = next.At
	}
}

// deliver acts on what the Coordinator sent at t: the picked LHAs of a
// round_start train and send their updates (in LHA order), and a
// round_result goes to OnRound.
func (p *InProcess) deliver(c *Coordinator, tr *loopback, w *inWorkers, t time.Time) error {
	sent, result, rejected := tr.take()
	p.Dropped += rejected
	if result != nil && p.OnRound != nil {
		m, err := protocol.Decode(protocol.Binary, result)
		if err != nil {
			return fmt.Errorf("study: in-process driver: round_result: %w", err)
		}
		rr, ok := m.(*protocol.RoundResult)
		if !ok {
			return fmt.Errorf("study: in-process driver: a %s was broadcast", m.Type())
		}
		p.OnRound(rr.Event, rr.Weights)
	}
	if len(sent) == 0 {
		return nil
	}
	// Every LHA gets one of two frames (picked or not): each is decoded
	// once.
	decoded := map[*byte]*protocol.RoundStart{}
	var round int
	var global []float64
	var picked []int
	for _, s := range sent {
		rs, ok := decoded[&s.b[0]]
		if !ok {
			m, err := protocol.Decode(protocol.Binary, s.b)
			if err != nil {
				return fmt.Errorf("study: in-process driver: frame to LHA %d: %w", s.lha, err)
			}
			if rs, ok = m.(*protocol.RoundStart); !ok {
				return fmt.Errorf("study: in-process driver: LHA %d was sent a %s", s.lha, m.Type())
			}
			decoded[&s.b[0]] = rs
		}
		if rs.Picked {
			round, global, picked = rs.Round, rs.Weights, append(picked, s.lha)
		}
	}
	frames, err := w.train(global, round, picked)
	if err != nil {
		return err
	}
	for i, lha := range picked {
		switch {
		case frames[i] == nil:
			p.Dropped++
		case len(frames[i]) > 0:
			c.Frame(lha, frames[i], t, func(protocol.Kind, []byte) {})
		}
	}
	return nil
}

// inWorkers computes a round's updates, and encodes them as frames, on
// the calling goroutine and up to Workers−1 helpers (with a Pool, as many
// as it has free slots). LHAs are handed out one at a time, so the
// fastest goroutine takes the most; each update depends only on its LHA
// and the global model, so the result is the same whoever computes it.
type inWorkers struct {
	p       *InProcess
	workers int
	updates [][]float64 // one per worker
}

func (w *inWorkers) init() {
	w.workers = w.p.Workers
	if w.workers <= 0 {
		w.workers = runtime.GOMAXPROCS(0)
	}
	w.updates = make([][]float64, w.workers)
}

// train returns the frame of each picked LHA's update: empty when it sends
// nothing, nil when its update is not finite (no frame carries it).
func (w *inWorkers) train(global []float64, round int, picked []int) ([][]byte, error) {
	frames := make([][]byte, len(picked))
	errs := make([]error, w.workers)
	var next atomic.Int64
	work := func(worker int) {
		if len(w.updates[worker]) != len(global) {
			w.updates[worker] = make([]float64, len(global))
		}
		dst := w.updates[worker]
		for errs[worker] == nil {
			i := int(next.Add(1)) - 1
			if i >= len(picked) {
				return
			}
			frames[i] = []byte{}
			if !w.p.Train(worker, picked[i], round, global, dst) {
				continue
			}
			_, b, err := protocol.Encode(&protocol.Update{Round: round, Weights: dst})
			switch {
			case errors.Is(err, protocol.ErrNotFinite):
				frames[i] = nil
			case err != nil:
				errs[worker] = err
			default:
				frames[i] = b
			}
		}
	}
	pool := w.p.Pool
	var wg sync.WaitGroup
	for h := 1; h < w.workers && h < len(picked); h++ {
		if pool != nil && !pool.TryAcquire() {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if pool != nil {
				defer pool.Release()
			}
			work(h)
		}()
	}
	work(0)
	wg.Wait()
	return frames, errors.Join(errs...)
}

// loopback is the in-process Transport: every LHA is online; it keeps the
// binary frames sent to single LHAs (round_start), the last broadcast
// round_result, and counts the error verdicts. Text frames carry nothing
// an in-process LHA acts on (welcome, acknowledgements, finished).
type loopback struct {
	mu       sync.Mutex
	n        int
	sent     []sentFrame
	result   []byte
	rejected int
}

type sentFrame struct {
	lha int
	b   []byte
}

func (l *loopback) Send(lha int, k protocol.Kind, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case k == protocol.Binary && len(b) > 0:
		l.sent = append(l.sent, sentFrame{lha, b})
	case k == protocol.Text:
		if m, err := protocol.Decode(protocol.Text, b); err == nil {
			if _, isErr := m.(*protocol.Error); isErr {
				l.rejected++
			}
		}
	}
}

func (l *loopback) Broadcast(k protocol.Kind, b []byte) {
	if k != protocol.Binary {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.result = b
}

func (l *loopback) Drop(int, string) {}
func (l *loopback) Online(int) bool  { return true }
func (l *loopback) Connected() int   { return l.n }

// take returns and forgets what was sent since the last call.
func (l *loopback) take() (sent []sentFrame, result []byte, rejected int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sent, result, rejected = l.sent, l.result, l.rejected
	l.sent, l.result, l.rejected = nil, nil, 0
	return sent, result, rejected
}
