package server

import (
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

// Timeouts of the transport.
const (
	HelloTimeout = 10 * time.Second
	WriteTimeout = 30 * time.Second
	outboxSize   = 16
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
	// (study.File.ResumeWait): after a start with committed rounds, the
	// next round opens once the quorum is online or this long after Run
	// began, whichever comes first.
	RestartGrace time.Duration
	// FramesInFlight bounds how many client frames are read, decoded and
	// submitted at once (0: max(MinFramesInFlight, 2×GOMAXPROCS)). Memory
	// for updates in flight is about FramesInFlight × 2 × the update
	// size, whatever the number of connections.
	FramesInFlight int
	// FrameReadTimeout bounds reading one frame's body while it holds a
	// slot (0: DefaultFrameReadTimeout); a client that sends slower is
	// disconnected, so it cannot keep the others waiting.
	FrameReadTimeout time.Duration
}

// Server is the coordinator's HTTP handler and round loop.
type Server struct {
	eng     *study.Engine
	ledger  *ledger.Ledger
	tokens  *study.Tokens
	log     *slog.Logger
	mux     *http.ServeMux
	origins []string
	limit   int64

	// Frames in flight: a slot is taken once a frame's header has arrived
	// and given back after the frame was decoded and handled (see
	// readFrame); bufs holds read buffers of limit+2 bytes.
	slots        chan struct{}
	bufs         sync.Pool
	frameTimeout time.Duration
	restartGrace time.Duration

	mu       sync.Mutex
	conns    map[int]*conn
	state    string
	closed   bool
	wake     chan struct{}
	lastSent []byte // encoded last round_result, shared by all sends

	pauseAfterCommit time.Duration // test-only (PauseAfterCommitEnv), research mode only

	m metrics
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
	s := &Server{
		eng: opt.Engine, ledger: opt.Ledger, tokens: study.NewTokens(opt.Engine.File),
		log: opt.Logger, mux: http.NewServeMux(), conns: map[int]*conn{},
		wake:  make(chan struct{}, 1),
		limit: protocol.FrameSize(opt.Engine.Study.Params),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opt.FramesInFlight < 0 || opt.FrameReadTimeout < 0 || opt.RestartGrace < 0 {
		return nil, errors.New("server: FramesInFlight, FrameReadTimeout and RestartGrace must be ≥ 0")
	}
	slots := opt.FramesInFlight
	if slots == 0 {
		slots = max(MinFramesInFlight, 2*runtime.GOMAXPROCS(0))
	}
	s.slots = make(chan struct{}, slots)
	s.frameTimeout = cmp.Or(opt.FrameReadTimeout, DefaultFrameReadTimeout)
	s.restartGrace = cmp.Or(opt.RestartGrace, opt.Engine.File.ResumeWait())
	// coder/websocket reads up to one byte past the read limit (to reach a
	// final frame) and fails, closing with 1009, on the read after that;
	// two spare bytes let that read happen before the buffer is full.
	size := int(s.limit) + 2
	s.bufs.New = func() any { b := make([]byte, size); return &b }
	s.origins = append(append([]string(nil), opt.Engine.File.Origins...), opt.OriginPatterns...)
	s.state = protocol.StateWaiting
	if s.eng.Rounds() > 0 {
		s.state = protocol.StateRunning
	}
	if s.eng.FinishedReason != "" {
		s.state = protocol.StateFinished
	}
	if last := s.eng.LastResult(); last != nil {
		if _, b, err := protocol.Encode(&protocol.RoundResult{Event: last.Event, Weights: last.Weights}); err == nil {
			s.lastSent = b
		} else {
			return nil, err
		}
	}
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

// State returns "waiting", "running" or "finished".
func (s *Server) State() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// --- round loop ---

// Run drives the study until it finishes (returns nil after the finished
// broadcast) or ctx ends (returns ctx.Err(); an open round is abandoned
// uncommitted). A ledger failure stops it with that error.
//
// Round 1 opens once the study file's quorum of LHAs is online. After a
// restart with committed rounds, the next round opens once the quorum is
// online again or the restart grace has passed since Run began, whichever
// comes first: without that wait it would open before the LHAs had
// reconnected, and a round in which no sampled LHA is online is pure noise
// that still spends a round's ε. Later rounds never wait.
//
// Online counts only ever decide WHEN the next round opens, never WHO is
// sampled: Engine.Begin draws the Poisson sample from all N enrolled LHAs
// with the same q whoever is connected, and an offline sampled LHA is a
// dropout. The accountant's amplification by sampling assumes exactly
// that; a sample drawn among the online LHAs only (or redrawn until it
// hits one) would have a q that depends on who is online, and the ε the
// ledger reports would be wrong. Waiting is safe because the time at
// which a round opens does not depend on any LHA's data.
func (s *Server) Run(ctx context.Context) error {
	f := s.eng.File
	quorum := f.Quorum()
	s.mu.Lock()
	resumed := s.eng.Rounds() > 0 && s.eng.FinishedReason == ""
	s.mu.Unlock()
	if resumed {
		if err := s.awaitReconnect(ctx, quorum, time.Now().Add(s.restartGrace)); err != nil {
			return err
		}
	}
	var lastStart time.Time
	for {
		s.mu.Lock()
		finished := s.eng.FinishedReason
		rounds := s.eng.Rounds()
		s.mu.Unlock()
		if finished != "" {
			s.finish()
			return nil
		}
		if rounds == 0 {
			if err := s.waitFor(ctx, time.Time{}, func() bool { return len(s.conns) >= quorum }); err != nil {
				return err
			}
		}
		if iv := time.Duration(f.RoundInterval); iv > 0 && !lastStart.IsZero() {
			if err := sleep(ctx, time.Until(lastStart.Add(iv))); err != nil {
				return err
			}
		}
		lastStart = time.Now()
		if err := s.round(ctx); err != nil {
			return err
		}
	}
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
	s.log.Info("resuming rounds", "reason", why, "online", online, "quorum", quorum, "waited", time.Since(t0).Round(time.Millisecond))
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
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

func (s *Server) round(ctx context.Context) error {
	deadline := time.Now().Add(time.Duration(s.eng.File.RoundDeadline))
	s.mu.Lock()
	r, err := s.eng.Begin()
	if errors.Is(err, study.ErrFinished) {
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.state = protocol.StateRunning
	_, start, err := protocol.Encode(&protocol.RoundStart{Round: r.ID, TimeLeft: time.Until(deadline), Weights: s.eng.Global()})
	if err != nil {
		s.mu.Unlock()
		return err
	}
	for _, i := range r.Sampled {
		if c := s.conns[i]; c != nil {
			r.Online++
			s.send(c, protocol.Binary, start)
		}
	}
	s.mu.Unlock()
	s.log.Info("round started", "round", r.ID, "sampled", len(r.Sampled), "online", r.Online, "deadline", deadline.Format(time.RFC3339))

	err = s.waitFor(ctx, deadline, func() bool {
		for _, i := range r.Sampled {
			if s.conns[i] != nil && !r.Answered(i) {
				return false
			}
		}
		return true
	})
	if err != nil {
		s.mu.Lock()
		s.eng.Open = nil // abandoned: nothing of it was released
		s.mu.Unlock()
		return err
	}

	s.mu.Lock()
	t0 := time.Now()
	res, err := s.eng.Complete()
	if err != nil {
		s.mu.Unlock()
		s.log.Error("round not committed: the study stops", "round", r.ID, "err", err)
		return err
	}
	s.m.commit.Observe(time.Since(t0).Seconds())
	s.m.duration.Observe(time.Since(r.Started).Seconds())
	_, b, err := protocol.Encode(&protocol.RoundResult{Event: res.Event, Weights: res.Weights})
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if s.pauseAfterCommit > 0 {
		s.log.Warn("TEST HOOK: paused between ledger commit and broadcast", "round", res.Event.Round, "received", r.Received, "model_sha256", res.Event.ModelSHA256)
		time.Sleep(s.pauseAfterCommit)
	}
	s.lastSent = b
	for _, c := range s.conns {
		s.send(c, protocol.Binary, b)
	}
	s.mu.Unlock()
	s.log.Info("round committed and released", "round", res.Event.Round, "q", res.Event.SampleRate,
		"c", res.Event.NoiseMultiplier, "epsilon", res.Event.Epsilon, "delta", res.Event.Delta,
		"sampled", len(r.Sampled), "received", r.Received, "rejected", r.Rejected,
		"model_sha256", res.Event.ModelSHA256, "took", time.Since(r.Started).Round(time.Millisecond))
	return nil
}

func (s *Server) finishedMessage() *protocol.Finished {
	m := &protocol.Finished{Rounds: s.eng.Rounds(), Epsilon: s.eng.EpsilonSpent(), Reason: s.eng.FinishedReason}
	if m.Rounds > 0 {
		m.ModelSHA256 = s.eng.Log[len(s.eng.Log)-1].ModelSHA256
	}
	return m
}

func (s *Server) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == protocol.StateFinished && s.eng.FinishedReason == "" {
		return
	}
	s.state = protocol.StateFinished
	_, b, err := protocol.Encode(s.finishedMessage())
	if err != nil {
		s.log.Error("encode finished", "err", err)
		return
	}
	for _, c := range s.conns {
		s.send(c, protocol.Text, b)
	}
	s.log.Info("study finished", "rounds", s.eng.Rounds(), "epsilon", s.eng.EpsilonSpent(), "reason", s.eng.FinishedReason)
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

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.origins})
	if err != nil {
		s.m.refused.WithLabelValues("origin_or_handshake").Inc()
		s.log.Info("websocket refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	ws.SetReadLimit(s.limit)
	ctx := r.Context()

	hctx, cancel := context.WithTimeout(ctx, HelloTimeout)
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
	c := &conn{lha: lha, ws: ws, out: make(chan frame, outboxSize), done: make(chan struct{}), since: time.Now(), remote: r.RemoteAddr}
	name := s.eng.File.LHAs[lha].Name

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
	welcome := &protocol.Welcome{Study: s.eng.Study, LHA: name, State: s.state, Log: append([]protocol.Event{}, s.eng.Log...)}
	_, wb, err := protocol.Encode(welcome)
	if err != nil {
		s.mu.Unlock()
		s.log.Error("encode welcome", "err", err)
		reject(ctx, ws, protocol.CodeInternal, "cannot encode the welcome")
		return
	}
	c.out <- frame{protocol.Text, wb}
	if s.lastSent != nil {
		c.out <- frame{protocol.Binary, s.lastSent}
	}
	if s.state == protocol.StateFinished {
		if _, fb, err := protocol.Encode(s.finishedMessage()); err == nil {
			c.out <- frame{protocol.Text, fb}
		}
	} else if open := s.eng.Open; open != nil && open.IsSampled(lha) && !open.Answered(lha) {
		deadline := open.Started.Add(time.Duration(s.eng.File.RoundDeadline))
		if _, sb, err := protocol.Encode(&protocol.RoundStart{Round: open.ID, TimeLeft: max(0, time.Until(deadline)), Weights: s.eng.Global()}); err == nil {
			c.out <- frame{protocol.Binary, sb}
		}
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
		code, round, msg := s.handle(c, typ, b)
		done()
		if code == 0 {
			continue
		}
		s.m.rejected.WithLabelValues(code.String()).Inc()
		s.log.Info("message rejected", "lha", s.eng.File.LHAs[c.lha].Name, "code", code.String(), "round", round, "err", msg)
		s.mu.Lock()
		s.send(c, protocol.Text, encodeErr(code, round, "%s", msg))
		s.mu.Unlock()
		if code.Fatal() {
			time.Sleep(50 * time.Millisecond)
			c.close(websocket.StatusPolicyViolation, code.String())
			return
		}
	}
}

// handle decodes and handles one frame from c; it returns 0 when the frame
// was an accepted update, else the error to answer with. b is not
// retained: protocol.Decode copies what it keeps.
func (s *Server) handle(c *conn, typ websocket.MessageType, b []byte) (code protocol.Code, round int, msg string) {
	m, err := protocol.Decode(kindOf(typ), b)
	switch {
	case errors.Is(err, protocol.ErrNotFinite):
		return protocol.CodeBadUpdate, 0, err.Error()
	case errors.Is(err, protocol.ErrVersion):
		return protocol.CodeVersion, 0, err.Error()
	case errors.Is(err, protocol.ErrTooLarge):
		return protocol.CodeTooLarge, 0, err.Error()
	case err != nil:
		return protocol.CodeBadFrame, 0, err.Error()
	}
	switch m := m.(type) {
	case *protocol.Update:
		code, msg = s.submit(c, m)
		return code, m.Round, msg
	case *protocol.Hello:
		return protocol.CodeHelloExpected, 0, "hello was already received"
	default:
		return protocol.CodeBadFrame, 0, fmt.Sprintf("a client may not send %s", m.Type())
	}
}

// submit hands an update to the engine; it returns 0 when accepted.
func (s *Server) submit(c *conn, u *protocol.Update) (protocol.Code, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[c.lha] != c {
		return protocol.CodeReplaced, "this connection was replaced"
	}
	err := s.eng.Submit(c.lha, u.Round, u.Weights)
	switch {
	case err == nil:
		s.m.received.Inc()
		_, b, _ := protocol.Encode(&protocol.Accepted{Round: u.Round})
		s.send(c, protocol.Text, b)
		s.signal()
		return 0, ""
	case errors.Is(err, study.ErrFinished):
		return protocol.CodeFinished, err.Error()
	case errors.Is(err, study.ErrStaleRound):
		return protocol.CodeStaleRound, err.Error()
	case errors.Is(err, study.ErrNotSampled):
		return protocol.CodeNotSampled, err.Error()
	case errors.Is(err, study.ErrDuplicate):
		return protocol.CodeDuplicateUpdate, err.Error()
	case errors.Is(err, fl.ErrUpdateLength), errors.Is(err, fl.ErrNotFinite):
		return protocol.CodeBadUpdate, err.Error()
	}
	return protocol.CodeInternal, err.Error()
}

// --- HTTP API ---

// Status is the public status: nothing in it depends on who takes part.
type Status = protocol.Status

// PublicStatus returns the public status.
func (s *Server) PublicStatus() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.publicStatus()
}

func (s *Server) publicStatus() Status {
	st := s.eng.Study
	return Status{
		Round: s.eng.Rounds(), Rounds: st.Rounds, EpsilonSpent: s.eng.EpsilonSpent(),
		EpsilonBudget: st.Epsilon, Delta: st.Delta, NoiseMultiplier: st.NoiseMultiplier,
		State: s.state, InsecureSeed: st.InsecureSeed, Name: st.Name, Clients: st.Clients,
		ExpectedClients: st.ExpectedClients, SampleRate: st.SampleRate, Protocol: protocol.Version,
		FinishReason: s.eng.FinishedReason,
	}
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
	s.mu.Lock()
	a := AdminStatus{Status: s.publicStatus(), Enrolled: len(s.eng.File.LHAs), Online: len(s.conns)}
	for i, l := range s.eng.File.LHAs {
		x := AdminLHA{Name: l.Name}
		if c := s.conns[i]; c != nil {
			x.Online = true
			since := c.since
			x.OnlineSince = &since
		}
		a.LHAs = append(a.LHAs, x)
	}
	if o := s.eng.Open; o != nil {
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
	s.mu.Lock()
	g := s.eng.Global()
	m := Model{Round: s.eng.Rounds(), Final: s.eng.FinishedReason != "", Layers: s.eng.Study.Layers,
		ModelSHA256: protocol.HashHex(g), Weights: append([]float64(nil), g...)}
	s.mu.Unlock()
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
		duration:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_duration_seconds", Help: "Time from round start to commit.", Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12)}),
		commit:     prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_commit_seconds", Help: "Time to aggregate, noise and commit a round to the ledger.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}),
	}
	locked := func(f func() float64) func() float64 {
		return func() float64 { s.mu.Lock(); defer s.mu.Unlock(); return f() }
	}
	reg.MustRegister(m.received, m.rejected, m.refused, m.slowFrames, m.duration, m.commit,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_online", Help: "LHAs connected."}, locked(func() float64 { return float64(len(s.conns)) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_rounds_completed", Help: "Rounds committed."}, locked(func() float64 { return float64(s.eng.Rounds()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_epsilon_spent", Help: "ε after the committed rounds."}, locked(func() float64 { return s.eng.EpsilonSpent() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_enrolled", Help: "N, enrolled LHAs."}, func() float64 { return float64(len(s.eng.File.LHAs)) }),
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	)
	return m
}
