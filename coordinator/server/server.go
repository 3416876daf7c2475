package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Timeouts and limits of the transport.
const (
	// DefaultHelloTimeout bounds the wait for a new connection's hello.
	DefaultHelloTimeout = 10 * time.Second
	WriteTimeout        = 30 * time.Second
	outboxSize          = 16
	// HelloLimit is the read limit before authentication: a hello is a
	// token and a version, well under 1 KiB. No larger frame is buffered
	// for a connection that has not authenticated.
	HelloLimit = 4 << 10
	// DefaultMaxUnauthenticated bounds the connections that have not yet
	// sent a valid hello, in total; DefaultMaxUnauthenticatedPerAddr per
	// remote address. A connection is unauthenticated for one round trip
	// (at most the hello timeout), so even 400 LHAs behind one NAT address
	// reconnecting at once after a restart pass within a few retries;
	// each costs a goroutine and at most HelloLimit bytes.
	DefaultMaxUnauthenticated        = 1024
	DefaultMaxUnauthenticatedPerAddr = 128
)

// Defaults of the bound on frames in flight (Options.FramesInFlight,
// Options.FrameReadTimeout).
const (
	// MinFramesInFlight is the least default number of frame slots; the
	// default is max(MinFramesInFlight, 2×GOMAXPROCS).
	MinFramesInFlight = 16
	// DefaultFrameReadTimeout bounds reading one frame's body once its
	// header has arrived and it holds a slot: 94 KiB (the paper's model)
	// in 10 s needs about 75 kbit/s.
	DefaultFrameReadTimeout = 10 * time.Second
)

// PauseAfterCommitEnv names a TEST-ONLY hook for crash tests: when the
// study runs in research mode (--insecure-seed) and this environment
// variable holds a Go duration ("3s"), the round loop logs "TEST HOOK:
// paused between ledger commit and broadcast" and sleeps that long after
// each round's ledger commit and before its round_result is broadcast, so
// that a test can SIGKILL the process in exactly that gap. It is ignored
// (never read) outside research mode.
const PauseAfterCommitEnv = "FEDCAST_TEST_PAUSE_AFTER_COMMIT"

// Options configure New.
type Options struct {
	// Engine is the study. Required.
	Engine *study.Engine
	// Ledger is the engine's ledger, for the admin export. Required.
	Ledger *ledger.Ledger
	// Static serves everything outside /api and /metrics (the browser
	// app). nil: 404.
	Static http.Handler
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OriginPatterns are browser origins allowed besides the own host and
	// the study file's origins.
	OriginPatterns []string
	// RestartGrace, if > 0, replaces the study file's restart grace
	// (study.File.ResumeWait): after a restart of a started study, the
	// next round opens at the first slot of the schedule after the quorum
	// is online or this long after Run began, whichever comes first.
	RestartGrace time.Duration
	// FramesInFlight bounds how many client frames are read at once (0:
	// max(MinFramesInFlight, 2×GOMAXPROCS)).
	FramesInFlight int
	// FrameReadTimeout bounds reading one frame's body while it holds a
	// slot (0: DefaultFrameReadTimeout); a client that sends slower is
	// disconnected, so it cannot keep the others waiting.
	FrameReadTimeout time.Duration
	// HelloTimeout bounds the wait for a new connection's hello (0:
	// DefaultHelloTimeout).
	HelloTimeout time.Duration
	// MaxUnauthenticated and MaxUnauthenticatedPerAddr bound the
	// connections that have not sent a valid hello yet, in total and per
	// remote IP address (0: the defaults). Connections over the bound are
	// refused with HTTP 503 before the websocket upgrade.
	MaxUnauthenticated        int
	MaxUnauthenticatedPerAddr int
}

// Server is the coordinator's HTTP handler and round loop.
//
// Locks: emu serialises the engine (only the round loop and admin
// handlers take it); mu guards the connections and the public snapshot
// and is only ever held briefly; pmu guards the frames received in the
// current window. No public path (welcome, status, replies) waits for the
// engine, so aggregating a round never delays anyone's replies.
type Server struct {
	eng     *study.Engine
	ledger  *ledger.Ledger
	tokens  *study.Tokens
	log     *slog.Logger
	mux     *http.ServeMux
	origins []string
	limit   int64

	// Frames in flight: a slot is taken once a frame's header has arrived
	// and given back once its body was read and buffered (see readFrame);
	// bufs holds read buffers of limit+2 bytes.
	slots        chan struct{}
	bufs         sync.Pool
	frameTimeout time.Duration
	restartGrace time.Duration
	helloTimeout time.Duration
	maxUnauth    int
	maxUnauthIP  int

	// Schedule: L and the slack.
	length, slack time.Duration

	emu sync.Mutex // the engine

	mu      sync.Mutex
	conns   map[int]*conn
	closed  bool
	wake    chan struct{}
	snap    snapshot
	unauth  map[string]int // unauthenticated connections per remote address
	nUnauth int

	pmu    sync.Mutex
	window *window     // the round taking updates; nil between windows
	late   map[int]int // LHA → binary frames received outside a window since the last release

	ack []byte // the fixed acknowledgement of every binary frame

	pauseAfterCommit time.Duration // test-only (PauseAfterCommitEnv), research mode only

	m metrics
}

// snapshot is everything a non-admin can see of the study, taken at
// schedule ticks only (s.mu).
type snapshot struct {
	status   protocol.Status
	log      []protocol.Event
	lastSent []byte // encoded last released round_result, shared by all sends
	finished []byte // encoded finished message once the study has ended
}

// window is the round that takes updates: its frames are buffered raw and
// decoded only when the window closes.
type window struct {
	round   int
	sampled map[int]bool
	closeAt time.Time
	weights []float64      // the model the round trains from
	frames  map[int][]byte // the first binary frame of each LHA
	extra   map[int]int    // further frames per LHA (answered duplicate_update)
}

// verdict is the answer to one buffered frame, sent at the release.
type verdict struct {
	code  protocol.Code
	round int
	msg   string
}

type conn struct {
	lha    int
	ws     *websocket.Conn
	out    chan frame
	done   chan struct{}
	once   sync.Once
	since  time.Time
	remote string
}

type frame struct {
	kind protocol.Kind
	b    []byte
}

// New returns a server for opt.Engine.
func New(opt *Options) (*Server, error) {
	if opt == nil || opt.Engine == nil || opt.Ledger == nil {
		return nil, errors.New("server: Options.Engine and Options.Ledger are required")
	}
	f := opt.Engine.File
	s := &Server{
		eng: opt.Engine, ledger: opt.Ledger, tokens: study.NewTokens(f),
		log: opt.Logger, mux: http.NewServeMux(), conns: map[int]*conn{},
		wake:   make(chan struct{}, 1),
		limit:  protocol.FrameSize(opt.Engine.Study.Params),
		length: time.Duration(f.RoundLength), slack: time.Duration(f.RoundSlack),
		unauth: map[string]int{}, late: map[int]int{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opt.FramesInFlight < 0 || opt.FrameReadTimeout < 0 || opt.RestartGrace < 0 || opt.HelloTimeout < 0 ||
		opt.MaxUnauthenticated < 0 || opt.MaxUnauthenticatedPerAddr < 0 {
		return nil, errors.New("server: FramesInFlight, FrameReadTimeout, RestartGrace, HelloTimeout and the connection bounds must be ≥ 0")
	}
	if s.length <= 0 || s.slack <= 0 || s.slack >= s.length {
		return nil, fmt.Errorf("server: the study's round_length %v and round_slack %v do not make a schedule", s.length, s.slack)
	}
	slots := opt.FramesInFlight
	if slots == 0 {
		slots = max(MinFramesInFlight, 2*runtime.GOMAXPROCS(0))
	}
	s.slots = make(chan struct{}, slots)
	s.frameTimeout = cmp.Or(opt.FrameReadTimeout, DefaultFrameReadTimeout)
	s.restartGrace = cmp.Or(opt.RestartGrace, f.ResumeWait())
	s.helloTimeout = cmp.Or(opt.HelloTimeout, DefaultHelloTimeout)
	s.maxUnauth = cmp.Or(opt.MaxUnauthenticated, DefaultMaxUnauthenticated)
	s.maxUnauthIP = cmp.Or(opt.MaxUnauthenticatedPerAddr, DefaultMaxUnauthenticatedPerAddr)
	// coder/websocket reads up to one byte past the read limit (to reach a
	// final frame) and fails, closing with 1009, on the read after that;
	// two spare bytes let that read happen before the buffer is full.
	size := int(s.limit) + 2
	s.bufs.New = func() any { b := make([]byte, size); return &b }
	s.origins = append(append([]string(nil), f.Origins...), opt.OriginPatterns...)
	_, ack, err := protocol.Encode(&protocol.Accepted{})
	if err != nil {
		return nil, err
	}
	s.ack = ack

	// The public snapshot as of now: the committed rounds count as
	// released (a restart releases the last one again).
	t0, err := s.ledger.ScheduleStart()
	if err != nil {
		return nil, err
	}
	state := protocol.StateWaiting
	if s.eng.Rounds() > 0 || !t0.IsZero() {
		state = protocol.StateRunning
	}
	if s.eng.Finished() != "" {
		state = protocol.StateFinished
	}
	snap := snapshot{log: s.eng.Events()}
	if last := s.eng.LastResult(); last != nil {
		_, b, err := protocol.Encode(&protocol.RoundResult{Event: last.Event, Weights: last.Weights})
		if err != nil {
			return nil, err
		}
		snap.lastSent = b
	}
	snap.status = s.statusOf(state, time.Now(), t0, nil)
	if state == protocol.StateFinished {
		if snap.finished, err = s.encodeFinished(); err != nil {
			return nil, err
		}
	}
	s.snap = snap

	s.m = newMetrics(s)
	s.mux.HandleFunc("GET /api/ws", s.serveWS)
	s.mux.HandleFunc("GET /api/status", s.serveStatus)
	s.mux.Handle("GET /api/admin/status", s.admin(http.HandlerFunc(s.serveAdminStatus)))
	s.mux.Handle("GET /api/admin/ledger", s.admin(http.HandlerFunc(s.serveLedger)))
	s.mux.Handle("GET /api/admin/model", s.admin(http.HandlerFunc(s.serveModel)))
	s.mux.Handle("GET /metrics", s.admin(promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{})))
	s.mux.HandleFunc("/api/", http.NotFound)
	if opt.Static != nil {
		s.mux.Handle("/", opt.Static)
	}
	if opt.Engine.Study.InsecureSeed {
		s.log.Warn("INSECURE SEED: sampling and noise are reproducible; this run gives NO privacy guarantee and must never be released")
		if v := os.Getenv(PauseAfterCommitEnv); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("server: %s=%q: %w", PauseAfterCommitEnv, v, err)
			}
			s.pauseAfterCommit = d
			s.log.Warn("TEST HOOK enabled: pausing between ledger commit and broadcast", "env", PauseAfterCommitEnv, "pause", d)
		}
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close disconnects every client (status 1001 going away). The round in
// progress, if any, is not committed: nothing of it was released.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close(websocket.StatusGoingAway, "coordinator shutting down")
	}
}

// State returns "waiting", "running" or "finished", as of the last
// schedule tick.
func (s *Server) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.status.State
}

// --- round loop ---

// Run drives the study until it finishes (returns nil after the finished
// broadcast) or ctx ends (returns ctx.Err(); an open round is abandoned
// uncommitted, a committed one is released by the next start). A ledger
// failure stops it with that error.
//
// Rounds follow a fixed public schedule. Once the study file's quorum of
// LHAs is online for the first time, that moment t₀ is recorded in the
// ledger; slot j of the schedule starts at t₀ + j·L. Round k opens at the
// start of its slot (before any restart: slot k−1), takes updates until
// L − slack later (the window; frames are buffered, not decoded), then is
// aggregated, noised and committed, and is released at the slot's end,
// which is the start of the next slot, when the next round opens. The
// round closes at its window's end whatever has arrived: a sampled LHA
// that is offline or late is a dropout. So every time a non-admin can
// observe is a function of t₀, L and the slack.
//
// If committing overruns the slack (it should not: the slack is sized
// for it, see docs/coordinator.md), the release moves to the next slot
// start after the commit, and the schedule continues from there: the
// slot in between stays empty.
//
// After a restart of a started study the next round opens at the first
// slot start after the quorum is online again or the restart grace has
// passed since Run began, whichever comes first; the last committed round
// is released again to everyone who connects.
//
// Online counts only ever decide WHEN the schedule starts, never WHO is
// sampled: Engine.Begin draws the Poisson sample from all N enrolled LHAs
// with the same q whoever is connected, and an offline sampled LHA is a
// dropout. The accountant's amplification by sampling assumes exactly
// that.
func (s *Server) Run(ctx context.Context) error {
	if s.eng.Finished() != "" {
		s.finish(time.Now())
		return nil
	}
	t0, err := s.ledger.ScheduleStart()
	if err != nil {
		return err
	}
	quorum := s.eng.File.Quorum()
	var j int64 // the slot of the next round
	if t0.IsZero() && s.eng.Rounds() == 0 {
		if err := s.waitFor(ctx, time.Time{}, func() bool { return len(s.conns) >= quorum }); err != nil {
			return err
		}
		t0 = time.Now()
		if err := s.ledger.SetScheduleStart(t0); err != nil {
			return err
		}
		s.log.Info("start quorum reached: the round schedule starts", "t0", t0.Format(time.RFC3339Nano), "round_length", s.length, "slack", s.slack)
		j = 0 // round 1 opens at t₀
	} else {
		if err := s.awaitReconnect(ctx, quorum, time.Now().Add(s.restartGrace)); err != nil {
			return err
		}
		if t0.IsZero() { // a ledger of a fedcast without schedules
			t0 = time.Now()
			if err := s.ledger.SetScheduleStart(t0); err != nil {
				return err
			}
		}
		j = nextSlot(t0, s.length, time.Now())
	}
	var pending *release
	for {
		tick := t0.Add(time.Duration(j) * s.length)
		if err := sleepUntil(ctx, tick); err != nil {
			s.abandon()
			return err
		}
		if pending != nil {
			if err := s.release(pending, t0, tick); err != nil {
				return err
			}
			pending = nil
		}
		s.emu.Lock()
		r, err := s.eng.Begin(s.online)
		s.emu.Unlock()
		if errors.Is(err, study.ErrFinished) {
			s.finish(tick)
			return nil
		}
		if err != nil {
			return err
		}
		closeAt := tick.Add(s.length - s.slack)
		s.open(r, t0, tick, closeAt)
		if err := sleepUntil(ctx, closeAt); err != nil {
			s.closeWindow()
			s.abandon()
			return err
		}
		w := s.closeWindow()
		pending, err = s.aggregate(r, w)
		if err != nil {
			s.log.Error("round not committed: the study stops", "round", r.ID, "err", err)
			return err
		}
		if s.pauseAfterCommit > 0 {
			s.log.Warn("TEST HOOK: paused between ledger commit and broadcast", "round", pending.res.Event.Round, "received", r.Received, "model_sha256", pending.res.Event.ModelSHA256)
			time.Sleep(s.pauseAfterCommit)
		}
		j++
		if now := time.Now(); now.After(t0.Add(time.Duration(j) * s.length)) {
			k := nextSlot(t0, s.length, now)
			s.log.Warn("committing overran the slack: the release moves to a later slot", "round", r.ID,
				"slots_skipped", k-j, "slack", s.slack, "took", now.Sub(closeAt).Round(time.Millisecond))
			j = k
		}
	}
}

// nextSlot returns the index of the first slot of the schedule (t0, L)
// that starts at or after now.
func nextSlot(t0 time.Time, l time.Duration, now time.Time) int64 {
	if !now.After(t0) {
		return 0
	}
	d := now.Sub(t0)
	return int64((d + l - 1) / l)
}

// online reports whether LHA lha is connected (for Begin's admin count).
func (s *Server) online(lha int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[lha] != nil
}

// awaitReconnect waits after a restart until quorum LHAs are online or the
// deadline passes (see Run).
func (s *Server) awaitReconnect(ctx context.Context, quorum int, deadline time.Time) error {
	s.mu.Lock()
	online := len(s.conns)
	s.mu.Unlock()
	s.log.Info("resumed: waiting for the LHAs to reconnect before the next round", "quorum", quorum, "online", online,
		"grace", time.Until(deadline).Round(time.Millisecond))
	t0 := time.Now()
	if err := s.waitFor(ctx, deadline, func() bool { return len(s.conns) >= quorum }); err != nil {
		return err
	}
	s.mu.Lock()
	online = len(s.conns)
	s.mu.Unlock()
	why := "quorum online"
	if online < quorum {
		why = "restart grace over"
	}
	s.log.Info("resuming rounds at the next slot", "reason", why, "online", online, "quorum", quorum, "waited", time.Since(t0).Round(time.Millisecond))
	return nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// waitFor waits until cond (called with s.mu held) holds, the deadline
// passes (zero: none) or ctx ends.
func (s *Server) waitFor(ctx context.Context, deadline time.Time, cond func() bool) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return nil
		case <-s.wake:
		}
	}
}

// statusOf builds the public status (s.mu held or during New). open is
// the round open at tick, if any.
func (s *Server) statusOf(state string, tick, t0 time.Time, open *window) protocol.Status {
	st := s.eng.Study
	sch := &protocol.Schedule{RoundLengthMillis: s.length.Milliseconds(), RoundSlackMillis: s.slack.Milliseconds()}
	if !t0.IsZero() {
		t := t0
		sch.Start = &t
	}
	if open != nil {
		opens, by, rel := tick, open.closeAt, open.closeAt.Add(s.slack)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = open.round, &opens, &by, &rel
	}
	asOf := tick
	return Status{
		Round: s.eng.Rounds(), Rounds: st.Rounds, EpsilonSpent: s.eng.EpsilonSpent(),
		EpsilonBudget: st.Epsilon, Delta: st.Delta, NoiseMultiplier: st.NoiseMultiplier,
		State: state, InsecureSeed: st.InsecureSeed, Name: st.Name, Clients: st.Clients,
		ExpectedClients: st.ExpectedClients, SampleRate: st.SampleRate, Protocol: protocol.Version,
		FinishReason: s.eng.Finished(), Schedule: sch, AsOf: &asOf,
	}
}

// open starts round r's window at tick: the public snapshot moves to the
// tick, and each sampled LHA online gets its round_start (nobody else
// gets anything).
func (s *Server) open(r *study.Round, t0, tick, closeAt time.Time) {
	s.emu.Lock()
	weights := s.eng.Global()
	rounds, eps, finished := s.eng.Rounds(), s.eng.EpsilonSpent(), s.eng.Finished()
	s.emu.Unlock()
	w := &window{round: r.ID, sampled: map[int]bool{}, closeAt: closeAt, weights: weights,
		frames: map[int][]byte{}, extra: map[int]int{}}
	for _, i := range r.Sampled {
		w.sampled[i] = true
	}
	_, start, err := protocol.Encode(&protocol.RoundStart{Round: r.ID, TimeLeft: time.Until(closeAt), Weights: weights})
	if err != nil {
		s.log.Error("encode round_start", "err", err)
	}
	s.pmu.Lock()
	s.window = w
	s.pmu.Unlock()
	s.mu.Lock()
	st := s.statusOf(protocol.StateRunning, tick, t0, w)
	st.Round, st.EpsilonSpent, st.FinishReason = rounds, eps, finished
	s.snap.status = st
	online := 0
	if start != nil {
		for _, i := range r.Sampled {
			if c := s.conns[i]; c != nil {
				online++
				s.send(c, protocol.Binary, start)
			}
		}
	}
	s.mu.Unlock()
	s.log.Info("round opened", "round", r.ID, "sampled", len(r.Sampled), "online", online, "closes", closeAt.Format(time.RFC3339Nano))
}

// closeWindow ends the open round's window and returns it (nil if none).
func (s *Server) closeWindow() *window {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	w := s.window
	s.window = nil
	return w
}

// abandon discards a round that is open or aggregating.
func (s *Server) abandon() {
	s.emu.Lock()
	defer s.emu.Unlock()
	if r := s.eng.Current(); r != nil && r.Phase() != study.PhaseCommitted {
		if err := s.eng.Abandon(); err == nil {
			s.log.Info("round abandoned: nothing of it was released", "round", r.ID)
		}
	}
}

// release is a committed round waiting for its release tick, with the
// answers to the frames of its window.
type release struct {
	res      *study.Result
	verdicts map[int][]verdict
	b        []byte // the encoded round_result (set at the release)
}

// aggregate decodes the window's frames, hands the updates to the engine
// in LHA order and completes the round (ledger commit). Nothing is sent:
// the release does that at the slot's end.
func (s *Server) aggregate(r *study.Round, w *window) (*release, error) {
	verdicts := map[int][]verdict{}
	t0 := time.Now()
	s.emu.Lock()
	defer s.emu.Unlock()
	if w != nil {
		lhas := make([]int, 0, len(w.frames))
		for lha := range w.frames {
			lhas = append(lhas, lha)
		}
		slices.Sort(lhas)
		for _, lha := range lhas {
			if v, ok := s.submit(lha, w.frames[lha]); !ok {
				verdicts[lha] = append(verdicts[lha], v)
			} else {
				s.m.received.Inc()
			}
			w.frames[lha] = nil
		}
		for lha, n := range w.extra {
			// One answer for all further frames: a burst of answers must
			// not overflow the sender's outbox.
			verdicts[lha] = append(verdicts[lha], verdict{protocol.CodeDuplicateUpdate, w.round,
				fmt.Sprintf("%d more frame(s) in round %d ignored: only the first frame of a round is read", n, w.round)})
		}
	}
	res, err := s.eng.Complete()
	if err != nil {
		return nil, err
	}
	s.m.commit.Observe(time.Since(t0).Seconds())
	for _, vs := range verdicts {
		for _, v := range vs {
			s.m.rejected.WithLabelValues(v.code.String()).Inc()
		}
	}
	s.log.Info("round committed", "round", res.Event.Round, "q", res.Event.SampleRate,
		"c", res.Event.NoiseMultiplier, "epsilon", res.Event.Epsilon, "delta", res.Event.Delta,
		"sampled", len(r.Sampled), "received", r.Received, "rejected", r.Rejected,
		"model_sha256", res.Event.ModelSHA256, "took", time.Since(t0).Round(time.Millisecond))
	return &release{res: res, verdicts: verdicts}, nil
}

// submit decodes one buffered frame of LHA lha and hands it to the engine
// (s.emu held); ok is false with the answer when it was not taken.
func (s *Server) submit(lha int, b []byte) (v verdict, ok bool) {
	m, err := protocol.Decode(protocol.Binary, b)
	switch {
	case errors.Is(err, protocol.ErrNotFinite):
		return verdict{protocol.CodeBadUpdate, 0, err.Error()}, false
	case errors.Is(err, protocol.ErrVersion):
		return verdict{protocol.CodeVersion, 0, err.Error()}, false
	case errors.Is(err, protocol.ErrTooLarge):
		return verdict{protocol.CodeTooLarge, 0, err.Error()}, false
	case err != nil:
		return verdict{protocol.CodeBadFrame, 0, err.Error()}, false
	}
	u, isUpdate := m.(*protocol.Update)
	if !isUpdate {
		return verdict{protocol.CodeBadFrame, 0, fmt.Sprintf("a client may not send %s", m.Type())}, false
	}
	err = s.eng.Submit(lha, u.Round, u.Weights)
	switch {
	case err == nil:
		return verdict{}, true
	case errors.Is(err, study.ErrFinished):
		return verdict{protocol.CodeFinished, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrStaleRound):
		return verdict{protocol.CodeStaleRound, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrNotSampled):
		return verdict{protocol.CodeNotSampled, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrDuplicate):
		return verdict{protocol.CodeDuplicateUpdate, u.Round, err.Error()}, false
	case errors.Is(err, fl.ErrUpdateLength), errors.Is(err, fl.ErrNotFinite):
		return verdict{protocol.CodeBadUpdate, u.Round, err.Error()}, false
	}
	return verdict{protocol.CodeInternal, u.Round, err.Error()}, false
}

// release sends a committed round at its release tick: the round_result
// to every connected LHA, each buffered frame's answer to its sender, and
// stale_round to frames that arrived outside a window; the public
// snapshot moves to the tick.
func (s *Server) release(p *release, t0, tick time.Time) error {
	s.emu.Lock()
	if err := s.eng.Release(); err != nil {
		s.log.Error("release", "err", err)
	}
	log := s.eng.Events()
	finished := s.eng.Finished()
	s.emu.Unlock()
	// The schedule as of the release: unless the study has ended, the
	// next round opens now.
	sch := &protocol.Schedule{Start: &t0, RoundLengthMillis: s.length.Milliseconds(), RoundSlackMillis: s.slack.Milliseconds()}
	if finished == "" {
		opens, by, rel := tick, tick.Add(s.length-s.slack), tick.Add(s.length)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = p.res.Event.Round+1, &opens, &by, &rel
	}
	_, b, err := protocol.Encode(&protocol.RoundResult{Event: p.res.Event, Weights: p.res.Weights, Schedule: sch})
	if err != nil {
		return err
	}
	p.b = b
	// pmu is held until the release's messages are queued, so that an
	// acknowledgement (queued under pmu, see receive) is either before
	// them with its frame's verdict among them, or after them with its
	// verdict at the next release.
	s.pmu.Lock()
	defer s.pmu.Unlock()
	late := s.late
	s.late = map[int]int{}
	s.mu.Lock()
	s.snap.lastSent = p.b
	s.snap.log = log
	s.snap.status.Round = p.res.Event.Round
	s.snap.status.EpsilonSpent = p.res.Event.Epsilon
	asOf := tick
	s.snap.status.AsOf = &asOf
	if sch := s.snap.status.Schedule; sch != nil {
		c := *sch
		c.Round, c.Opens, c.TrainBy, c.Release = 0, nil, nil, nil
		s.snap.status.Schedule = &c
	}
	// Each sender's verdicts go out just before the release, at the same
	// tick: an update acknowledged before the round's result and not
	// refused before it was counted, so the client can say so (see
	// wasm/client). Nothing here depends on timing beyond the tick.
	var fatal []*conn
	for lha, vs := range p.verdicts {
		c := s.conns[lha]
		if c == nil {
			continue
		}
		for _, v := range vs {
			s.send(c, protocol.Text, encodeErr(v.code, v.round, "%s", v.msg))
			if v.code.Fatal() {
				fatal = append(fatal, c)
			}
		}
	}
	for lha, n := range late {
		if c := s.conns[lha]; c != nil {
			s.send(c, protocol.Text, encodeErr(protocol.CodeStaleRound, 0, "%d frame(s) arrived while no round was taking updates", n))
		}
	}
	for _, c := range s.conns {
		s.send(c, protocol.Binary, p.b)
	}
	s.mu.Unlock()
	for _, c := range fatal {
		go func() {
			time.Sleep(50 * time.Millisecond) // let the writer flush the error
			c.close(websocket.StatusPolicyViolation, "bad frame")
		}()
	}
	s.m.duration.Observe(time.Since(tick.Add(-s.length)).Seconds())
	s.log.Info("round released", "round", p.res.Event.Round, "model_sha256", p.res.Event.ModelSHA256)
	return nil
}

func (s *Server) encodeFinished() ([]byte, error) {
	m := &protocol.Finished{Rounds: s.eng.Rounds(), Epsilon: s.eng.EpsilonSpent(), Reason: s.eng.Finished()}
	if ev := s.eng.Events(); len(ev) > 0 {
		m.ModelSHA256 = ev[len(ev)-1].ModelSHA256
	}
	_, b, err := protocol.Encode(m)
	return b, err
}

// finish announces the end of the study at tick.
func (s *Server) finish(tick time.Time) {
	s.emu.Lock()
	b, err := s.encodeFinished()
	rounds, eps, reason := s.eng.Rounds(), s.eng.EpsilonSpent(), s.eng.Finished()
	s.emu.Unlock()
	if err != nil {
		s.log.Error("encode finished", "err", err)
		return
	}
	t0, _ := s.ledger.ScheduleStart()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap.finished != nil {
		return // announced already (a study that had ended before New: in every welcome)
	}
	s.snap.status = s.statusOf(protocol.StateFinished, tick, t0, nil)
	s.snap.finished = b
	for _, c := range s.conns {
		s.send(c, protocol.Text, b)
	}
	s.log.Info("study finished", "rounds", rounds, "epsilon", eps, "reason", reason)
}

// --- connections ---

// send queues a frame for c; a full outbox drops the client. s.mu held.
func (s *Server) send(c *conn, k protocol.Kind, b []byte) {
	select {
	case c.out <- frame{k, b}:
	default:
		s.log.Warn("client too slow, disconnecting", "lha", s.eng.File.LHAs[c.lha].Name)
		go c.close(websocket.StatusPolicyViolation, "too slow")
	}
}

func (c *conn) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		go func() {
			c.ws.Close(code, reason)
		}()
	})
}

func (c *conn) writer() {
	for {
		select {
		case <-c.done:
			return
		case f := <-c.out:
			typ := websocket.MessageText
			if f.kind == protocol.Binary {
				typ = websocket.MessageBinary
			}
			ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
			err := c.ws.Write(ctx, typ, f.b)
			cancel()
			if err != nil {
				c.close(websocket.StatusGoingAway, "write failed")
				return
			}
		}
	}
}

func encodeErr(code protocol.Code, round int, format string, a ...any) []byte {
	_, b, err := protocol.Encode(&protocol.Error{Code: code, Round: round, Message: fmt.Sprintf(format, a...)})
	if err != nil {
		panic("server: cannot encode an error message: " + err.Error())
	}
	return b
}

// reject sends an error on a connection not (yet) registered and closes it.
func reject(ctx context.Context, ws *websocket.Conn, code protocol.Code, msg string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ws.Write(ctx, websocket.MessageText, encodeErr(code, 0, "%s", msg))
	ws.Close(websocket.StatusPolicyViolation, code.String())
}

// remoteHost is the IP address of a request's peer (the whole RemoteAddr
// if it has no port).
func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// admitUnauth counts a new unauthenticated connection from host; it
// returns false, counting nothing, when a bound is reached.
func (s *Server) admitUnauth(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nUnauth >= s.maxUnauth || s.unauth[host] >= s.maxUnauthIP {
		return false
	}
	s.nUnauth++
	s.unauth[host]++
	return true
}

func (s *Server) leaveUnauth(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nUnauth--
	if s.unauth[host]--; s.unauth[host] <= 0 {
		delete(s.unauth, host)
	}
}

// Unauthenticated returns the number of connections that have not sent a
// valid hello yet.
func (s *Server) Unauthenticated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nUnauth
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	host := remoteHost(r)
	if !s.admitUnauth(host) {
		s.m.refused.WithLabelValues("too_many_unauthenticated").Inc()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many connections waiting to authenticate; retry shortly", http.StatusServiceUnavailable)
		return
	}
	authed := false
	defer func() {
		if !authed {
			s.leaveUnauth(host)
		}
	}()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.origins})
	if err != nil {
		s.m.refused.WithLabelValues("origin_or_handshake").Inc()
		s.log.Info("websocket refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	// Before authentication only a hello-sized frame is read.
	ws.SetReadLimit(HelloLimit)
	ctx := r.Context()

	hctx, cancel := context.WithTimeout(ctx, s.helloTimeout)
	typ, b, err := ws.Read(hctx)
	cancel()
	if err != nil {
		s.m.refused.WithLabelValues("no_hello").Inc()
		ws.CloseNow()
		return
	}
	m, err := protocol.Decode(kindOf(typ), b)
	if errors.Is(err, protocol.ErrVersion) {
		s.m.refused.WithLabelValues("version").Inc()
		reject(ctx, ws, protocol.CodeVersion, err.Error())
		return
	}
	hello, ok := m.(*protocol.Hello)
	if err != nil || !ok {
		s.m.refused.WithLabelValues("hello_expected").Inc()
		reject(ctx, ws, protocol.CodeHelloExpected, "the first message must be hello")
		return
	}
	lha := s.tokens.LHA(hello.Token)
	if lha < 0 {
		s.m.refused.WithLabelValues("unauthorized").Inc()
		s.log.Info("unknown join token", "remote", r.RemoteAddr)
		reject(ctx, ws, protocol.CodeUnauthorized, "unknown join token")
		return
	}
	authed = true
	s.leaveUnauth(host)
	ws.SetReadLimit(s.limit)
	c := &conn{lha: lha, ws: ws, out: make(chan frame, outboxSize), done: make(chan struct{}), since: time.Now(), remote: r.RemoteAddr}
	name := s.eng.File.LHAs[lha].Name

	// The round_start for a sampled LHA that has not sent its frame yet
	// (it reconnects during its round's window).
	var resend []byte
	s.pmu.Lock()
	if w := s.window; w != nil && w.sampled[lha] && w.frames[lha] == nil {
		if _, sb, err := protocol.Encode(&protocol.RoundStart{Round: w.round, TimeLeft: max(0, time.Until(w.closeAt)), Weights: w.weights}); err == nil {
			resend = sb
		}
	}
	s.pmu.Unlock()

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		reject(ctx, ws, protocol.CodeInternal, "coordinator shutting down")
		return
	}
	if old := s.conns[lha]; old != nil {
		select {
		case old.out <- frame{protocol.Text, encodeErr(protocol.CodeReplaced, 0, "a newer connection joined with this token")}:
		default:
		}
		go func() {
			time.Sleep(100 * time.Millisecond) // let the writer flush the error
			old.close(websocket.StatusPolicyViolation, "replaced")
		}()
		s.log.Info("connection replaced", "lha", name)
	}
	s.conns[lha] = c
	snap := s.snap
	st := snap.status
	welcome := &protocol.Welcome{Study: s.eng.Study, LHA: name, State: st.State, Schedule: st.Schedule, Log: append([]protocol.Event{}, snap.log...)}
	_, wb, err := protocol.Encode(welcome)
	if err != nil {
		delete(s.conns, lha)
		s.mu.Unlock()
		s.log.Error("encode welcome", "err", err)
		reject(ctx, ws, protocol.CodeInternal, "cannot encode the welcome")
		return
	}
	c.out <- frame{protocol.Text, wb}
	if snap.lastSent != nil {
		c.out <- frame{protocol.Binary, snap.lastSent}
	}
	if snap.finished != nil {
		c.out <- frame{protocol.Text, snap.finished}
	} else if resend != nil {
		c.out <- frame{protocol.Binary, resend}
	}
	s.mu.Unlock()
	s.signal()
	s.log.Debug("LHA joined", "lha", name, "remote", r.RemoteAddr)

	go c.writer()
	s.readLoop(ctx, c)

	s.mu.Lock()
	if s.conns[lha] == c {
		delete(s.conns, lha)
	}
	s.mu.Unlock()
	c.close(websocket.StatusNormalClosure, "")
	s.signal()
	s.log.Debug("LHA left", "lha", name)
}

func kindOf(t websocket.MessageType) protocol.Kind {
	if t == websocket.MessageBinary {
		return protocol.Binary
	}
	return protocol.Text
}

// errFrameTimeout ends a connection whose frame body did not arrive within
// the frame read timeout.
var errFrameTimeout = errors.New("server: frame body not received in time")

// readFrame reads c's next message. It waits for the message's header
// without holding anything (an idle connection costs no buffer), then takes
// one of the server's frame slots, and only then reads the body, into a
// pooled buffer, within the frame read timeout. Until then the body stays
// in the kernel's socket buffer, where TCP flow control holds back the
// rest. The caller decodes and handles the frame, then calls done, which
// returns the buffer and the slot. So however many updates arrive at once,
// at most cap(s.slots) frames and their decoded weights are in memory.
//
// A body not read within the timeout closes the connection (cancelling a
// coder/websocket read context closes the socket): a slow or stalled
// sender holds its slot for at most that long.
func (s *Server) readFrame(ctx context.Context, c *conn) (typ websocket.MessageType, b []byte, done func(), err error) {
	// The context of Reader also bounds the body's reads; the timer below
	// cancels it once the body takes too long. It is not cancelled when c
	// is closed: cancelling a read closes the socket without a close
	// frame. c.close sends the close frame, which ends the read.
	mctx, cancel := context.WithCancel(ctx)
	typ, r, err := c.ws.Reader(mctx)
	if err != nil {
		cancel()
		return 0, nil, nil, err
	}
	select {
	case s.slots <- struct{}{}:
	case <-c.done:
		cancel()
		return 0, nil, nil, net.ErrClosed
	case <-ctx.Done():
		cancel()
		return 0, nil, nil, ctx.Err()
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(s.frameTimeout, func() { timedOut.Store(true); cancel() })
	buf := s.bufs.Get().(*[]byte)
	done = func() {
		s.bufs.Put(buf)
		<-s.slots
	}
	n, err := readBody(r, *buf)
	timer.Stop()
	cancel() // the read is over: cancelling no longer touches the socket
	if timedOut.Load() {
		err = errFrameTimeout
	}
	if err != nil {
		done()
		return 0, nil, nil, err
	}
	return typ, (*buf)[:n], done, nil
}

// readBody reads r to its end into buf. The websocket read limit (below
// len(buf)) ends an oversized message first; a full buffer is reported as
// too large all the same.
func readBody(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, fmt.Errorf("%w: message of %d bytes or more", protocol.ErrTooLarge, len(buf))
}

func (s *Server) readLoop(ctx context.Context, c *conn) {
	for {
		typ, b, done, err := s.readFrame(ctx, c)
		if err != nil {
			name := s.eng.File.LHAs[c.lha].Name
			switch {
			case errors.Is(err, websocket.ErrMessageTooBig), errors.Is(err, protocol.ErrTooLarge):
				s.m.rejected.WithLabelValues(protocol.CodeTooLarge.String()).Inc()
				s.log.Info("frame over the size limit: connection closed", "lha", name, "limit", s.limit)
			case errors.Is(err, errFrameTimeout):
				s.m.slowFrames.Inc()
				s.log.Info("frame body too slow: connection closed", "lha", name, "timeout", s.frameTimeout)
			}
			return
		}
		if typ == websocket.MessageBinary {
			s.receive(c, b) // acknowledges it
			done()
			continue
		}
		code, msg := s.handleText(b)
		done()
		s.m.rejected.WithLabelValues(code.String()).Inc()
		s.log.Info("message rejected", "lha", s.eng.File.LHAs[c.lha].Name, "code", code.String(), "err", msg)
		s.send(c, protocol.Text, encodeErr(code, 0, "%s", msg))
		if code.Fatal() {
			time.Sleep(50 * time.Millisecond)
			c.close(websocket.StatusPolicyViolation, code.String())
			return
		}
	}
}

// receive buffers a binary frame of c's LHA for the window that is open
// (only its first frame per window is kept; the others are counted and
// answered duplicate_update), or counts it as late when no window is open
// (answered stale_round at the next release). Nothing is decoded here: a
// frame's content cannot change how long its reply takes.
//
// It sends the same acknowledgement for every binary frame, at once (its
// content is checked when the window closes), under the lock that the
// close and the release take the buffered frames with: an acknowledgement
// queued before a release's messages means the frame's verdict comes with
// that release; one queued after, with the next.
func (s *Server) receive(c *conn, b []byte) {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	s.send(c, protocol.Text, s.ack)
	w := s.window
	switch {
	case w == nil:
		s.late[c.lha]++
	case w.frames[c.lha] != nil:
		w.extra[c.lha]++
	default:
		w.frames[c.lha] = bytes.Clone(b)
	}
}

// handleText answers a text frame from an authenticated client: clients
// send only hello (once) and binary updates, so every text frame is an
// error; its answer depends on that frame alone.
func (s *Server) handleText(b []byte) (protocol.Code, string) {
	m, err := protocol.Decode(protocol.Text, b)
	switch {
	case errors.Is(err, protocol.ErrVersion):
		return protocol.CodeVersion, err.Error()
	case errors.Is(err, protocol.ErrTooLarge):
		return protocol.CodeTooLarge, err.Error()
	case err != nil:
		return protocol.CodeBadFrame, err.Error()
	}
	if _, ok := m.(*protocol.Hello); ok {
		return protocol.CodeHelloExpected, "hello was already received"
	}
	return protocol.CodeBadFrame, fmt.Sprintf("a client may not send %s", m.Type())
}

// --- HTTP API ---

// Status is the public status: nothing in it depends on who takes part.
type Status = protocol.Status

// PublicStatus returns the public status: the snapshot taken at the last
// schedule tick (it changes at ticks only).
func (s *Server) PublicStatus() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap.status
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.PublicStatus())
}

func (s *Server) admin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.tokens.Admin(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fedcast admin"`)
			http.Error(w, "admin token required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// AdminStatus is the admin dashboard's view: participation included.
type AdminStatus = protocol.AdminStatus

// AdminLHA is one enrolled LHA's connection state.
type AdminLHA = protocol.AdminLHA

// AdminRound is the open round.
type AdminRound = protocol.AdminRound

func (s *Server) serveAdminStatus(w http.ResponseWriter, r *http.Request) {
	// The ledger is read after the snapshot, so that the participation
	// record covers every round the snapshot counts (a "finished" state
	// comes with all rounds' records).
	s.emu.Lock()
	defer s.emu.Unlock()
	s.mu.Lock()
	a := AdminStatus{Status: s.snap.status, Enrolled: len(s.eng.File.LHAs), Online: len(s.conns)}
	for i, l := range s.eng.File.LHAs {
		x := AdminLHA{Name: l.Name}
		if c := s.conns[i]; c != nil {
			x.Online = true
			since := c.since
			x.OnlineSince = &since
		}
		a.LHAs = append(a.LHAs, x)
	}
	if o := s.eng.Current(); o != nil {
		ar := &AdminRound{Round: o.ID, Online: o.Online, Received: o.Received, Rejected: o.Rejected, Started: o.Started, Sampled: []string{}}
		for _, i := range o.Sampled {
			ar.Sampled = append(ar.Sampled, s.eng.File.LHAs[i].Name)
		}
		a.OpenRound = ar
	}
	s.mu.Unlock()
	parts, err := s.ledger.Participation()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a.Participation = parts
	if a.Participation == nil {
		a.Participation = []ledger.Participation{}
	}
	writeJSON(w, a)
}

func (s *Server) serveLedger(w http.ResponseWriter, r *http.Request) {
	e, err := s.ledger.Export(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, e)
}

// Model is the JSON form of a global model.
type Model struct {
	Round       int       `json:"round"`
	Final       bool      `json:"final"`
	Layers      []int     `json:"layers"`
	ModelSHA256 string    `json:"model_sha256"`
	Weights     []float64 `json:"weights"`
}

func (s *Server) serveModel(w http.ResponseWriter, r *http.Request) {
	s.emu.Lock()
	g := s.eng.Global()
	m := Model{Round: s.eng.Rounds(), Final: s.eng.Finished() != "", Layers: s.eng.Study.Layers,
		ModelSHA256: protocol.HashHex(g), Weights: append([]float64(nil), g...)}
	s.emu.Unlock()
	writeJSON(w, m)
}

// --- metrics ---

type metrics struct {
	reg      *prometheus.Registry
	received prometheus.Counter
	rejected *prometheus.CounterVec
	refused  *prometheus.CounterVec
	// slowFrames counts connections closed because a frame's body took
	// longer than the frame read timeout.
	slowFrames prometheus.Counter
	duration   prometheus.Histogram
	commit     prometheus.Histogram
}

func newMetrics(s *Server) metrics {
	reg := prometheus.NewRegistry()
	m := metrics{
		reg:        reg,
		received:   prometheus.NewCounter(prometheus.CounterOpts{Name: "fedcast_updates_received_total", Help: "Updates accepted."}),
		rejected:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_messages_rejected_total", Help: "Client messages rejected, by protocol error code."}, []string{"code"}),
		refused:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_connections_refused_total", Help: "Websocket connections refused, by reason."}, []string{"reason"}),
		slowFrames: prometheus.NewCounter(prometheus.CounterOpts{Name: "fedcast_frames_timed_out_total", Help: "Connections closed because a frame body was not received within the frame read timeout."}),
		duration:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_duration_seconds", Help: "Time from a round's opening to its release (one slot unless committing overran the slack).", Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12)}),
		commit:     prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_commit_seconds", Help: "Time to aggregate, noise and commit a round to the ledger.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}),
	}
	locked := func(f func() float64) func() float64 {
		return func() float64 { s.mu.Lock(); defer s.mu.Unlock(); return f() }
	}
	engine := func(f func() float64) func() float64 {
		return func() float64 { s.emu.Lock(); defer s.emu.Unlock(); return f() }
	}
	reg.MustRegister(m.received, m.rejected, m.refused, m.slowFrames, m.duration, m.commit,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_online", Help: "LHAs connected."}, locked(func() float64 { return float64(len(s.conns)) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_rounds_completed", Help: "Rounds committed."}, engine(func() float64 { return float64(s.eng.Rounds()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_epsilon_spent", Help: "ε after the committed rounds."}, engine(func() float64 { return s.eng.EpsilonSpent() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_enrolled", Help: "N, enrolled LHAs."}, func() float64 { return float64(len(s.eng.File.LHAs)) }),
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	)
	return m
}
