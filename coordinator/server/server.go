package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
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
func (s *Server) Run(ctx context.Context) error {
	f := s.eng.File
	quorum := f.StartQuorum
	if quorum == 0 {
		quorum = len(f.LHAs)
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

func (s *Server) readLoop(ctx context.Context, c *conn) {
	// The read context is not cancelled when c is closed: cancelling a
	// Read closes the socket without a close frame. c.close sends the close
	// frame, which ends this Read.
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == -1 && strings.Contains(err.Error(), "read limited") {
				s.m.rejected.WithLabelValues(protocol.CodeTooLarge.String()).Inc()
				s.log.Info("frame over the size limit: connection closed", "lha", s.eng.File.LHAs[c.lha].Name, "limit", s.limit)
			}
			return
		}
		m, err := protocol.Decode(kindOf(typ), b)
		var code protocol.Code
		var round int
		var msg string
		switch {
		case errors.Is(err, protocol.ErrNotFinite):
			code, msg = protocol.CodeBadUpdate, err.Error()
		case errors.Is(err, protocol.ErrVersion):
			code, msg = protocol.CodeVersion, err.Error()
		case errors.Is(err, protocol.ErrTooLarge):
			code, msg = protocol.CodeTooLarge, err.Error()
		case err != nil:
			code, msg = protocol.CodeBadFrame, err.Error()
		default:
			switch m := m.(type) {
			case *protocol.Update:
				round = m.Round
				code, msg = s.submit(c, m)
			case *protocol.Hello:
				code, msg = protocol.CodeHelloExpected, "hello was already received"
			default:
				code, msg = protocol.CodeBadFrame, fmt.Sprintf("a client may not send %s", m.Type())
			}
		}
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
type Status struct {
	Round           int     `json:"round"`
	Rounds          int     `json:"rounds"`
	EpsilonSpent    float64 `json:"epsilon_spent"`
	EpsilonBudget   float64 `json:"epsilon_budget"`
	Delta           float64 `json:"delta"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	State           string  `json:"state"`
	InsecureSeed    bool    `json:"insecure_seed"`
	Name            string  `json:"name"`
	Clients         int     `json:"clients"`
	ExpectedClients int     `json:"expected_clients"`
	SampleRate      float64 `json:"sample_rate"`
	Protocol        int     `json:"protocol"`
	FinishReason    string  `json:"finish_reason,omitempty"`
}

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
type AdminStatus struct {
	Status
	Enrolled      int                    `json:"enrolled"`
	Online        int                    `json:"online"`
	LHAs          []AdminLHA             `json:"lhas"`
	OpenRound     *AdminRound            `json:"open_round"`
	Participation []ledger.Participation `json:"participation"`
}

// AdminLHA is one enrolled LHA's connection state.
type AdminLHA struct {
	Name        string     `json:"name"`
	Online      bool       `json:"online"`
	OnlineSince *time.Time `json:"online_since,omitempty"`
}

// AdminRound is the open round.
type AdminRound struct {
	Round    int       `json:"round"`
	Sampled  []string  `json:"sampled"`
	Online   int       `json:"online"`
	Received int       `json:"received"`
	Rejected int       `json:"rejected"`
	Started  time.Time `json:"started"`
}

func (s *Server) serveAdminStatus(w http.ResponseWriter, r *http.Request) {
	parts, err := s.ledger.Participation()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	a := AdminStatus{Status: s.publicStatus(), Enrolled: len(s.eng.File.LHAs), Online: len(s.conns), Participation: parts}
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
	duration prometheus.Histogram
	commit   prometheus.Histogram
}

func newMetrics(s *Server) metrics {
	reg := prometheus.NewRegistry()
	m := metrics{
		reg:      reg,
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "fedcast_updates_received_total", Help: "Updates accepted."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_messages_rejected_total", Help: "Client messages rejected, by protocol error code."}, []string{"code"}),
		refused:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fedcast_connections_refused_total", Help: "Websocket connections refused, by reason."}, []string{"reason"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_duration_seconds", Help: "Time from round start to commit.", Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 12)}),
		commit:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fedcast_round_commit_seconds", Help: "Time to aggregate, noise and commit a round to the ledger.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}),
	}
	locked := func(f func() float64) func() float64 {
		return func() float64 { s.mu.Lock(); defer s.mu.Unlock(); return f() }
	}
	reg.MustRegister(m.received, m.rejected, m.refused, m.duration, m.commit,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_online", Help: "LHAs connected."}, locked(func() float64 { return float64(len(s.conns)) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_rounds_completed", Help: "Rounds committed."}, locked(func() float64 { return float64(s.eng.Rounds()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_epsilon_spent", Help: "ε after the committed rounds."}, locked(func() float64 { return s.eng.EpsilonSpent() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fedcast_clients_enrolled", Help: "N, enrolled LHAs."}, func() float64 { return float64(len(s.eng.File.LHAs)) }),
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	)
	return m
}
