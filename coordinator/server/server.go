package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// Timeouts and limits of the transport.
const (
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
	// MaxFailedAuth is how many refused websocket handshakes (no or an
	// unknown join token) one address may make per study.FailedAuthWindow
	// before it is answered HTTP 429 (0: study.DefaultMaxFailedAuth). A
	// handshake with a valid token is never refused for its address.
	MaxFailedAuth int
	// Helper gets the helper's aggregate share in a study with a helper
	// (nil: posted to the study's helper URL, helper.Client, with a
	// timeout of half the round slack).
	Helper study.HelperFunc
	// StudyDir is the directory relative paths of declared public input
	// files are read from (public.go; "": the working directory).
	StudyDir string
}

// Server is the coordinator's HTTP handler and the driver of its rounds
// (a study.Coordinator) over websocket connections.
//
// Locks: the Coordinator serialises the engine and guards the open
// window's frames and the public snapshot (see study.Coordinator); mu
// guards the connections and is only ever held briefly, never while
// calling into the Coordinator. No public path (welcome, status, replies)
// waits for the engine, so aggregating a round never delays anyone's
// replies.
type Server struct {
	eng     *study.Engine
	co      *study.Coordinator
	ledger  *ledger.Ledger
	tokens  *study.Tokens
	log     *slog.Logger
	mux     *http.ServeMux
	origins []string
	limit   int64
	// studyDir: Options.StudyDir.
	studyDir string

	// Frames in flight: a slot is taken once a frame's header has arrived
	// and given back once its body was read and buffered (see readFrame);
	// bufs holds read buffers of limit+2 bytes.
	slots        chan struct{}
	bufs         sync.Pool
	frameTimeout time.Duration
	fails        *study.AuthFailures // refused handshakes per address (auth.go)

	mu     sync.Mutex
	conns  map[int]*conn
	closed bool
	wake   chan struct{}

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
	f := opt.Engine.File
	s := &Server{
		eng: opt.Engine, ledger: opt.Ledger, tokens: study.NewTokens(f),
		log: opt.Logger, mux: http.NewServeMux(), conns: map[int]*conn{},
		wake:     make(chan struct{}, 1),
		limit:    protocol.FrameSize(opt.Engine.Study.Params),
		studyDir: opt.StudyDir,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if opt.FramesInFlight < 0 || opt.FrameReadTimeout < 0 || opt.RestartGrace < 0 || opt.MaxFailedAuth < 0 {
		return nil, errors.New("server: FramesInFlight, FrameReadTimeout, RestartGrace and MaxFailedAuth must be ≥ 0")
	}
	slots := opt.FramesInFlight
	if slots == 0 {
		slots = max(MinFramesInFlight, 2*runtime.GOMAXPROCS(0))
	}
	s.slots = make(chan struct{}, slots)
	s.frameTimeout = cmp.Or(opt.FrameReadTimeout, DefaultFrameReadTimeout)
	s.fails = study.NewAuthFailures(opt.MaxFailedAuth, study.FailedAuthWindow)
	// coder/websocket reads up to one byte past the read limit (to reach a
	// final frame) and fails, closing with 1009, on the read after that;
	// two spare bytes let that read happen before the buffer is full.
	size := int(s.limit) + 2
	s.bufs.New = func() any { b := make([]byte, size); return &b }
	s.origins = append(append([]string(nil), f.Origins...), opt.OriginPatterns...)

	s.m = newMetrics(s)
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
	co, err := study.NewCoordinator(opt.Engine, study.DriverOptions{
		Transport: transport{s}, Logger: s.log, RestartGrace: opt.RestartGrace, Clock: time.Now, Helper: helperFunc(*opt),
		Hooks: study.Hooks{
			Accepted:  s.m.received.Inc,
			Rejected:  func(code protocol.Code) { s.m.rejected.WithLabelValues(code.String()).Inc() },
			Committed: func(_ int, took time.Duration) { s.m.commit.Observe(took.Seconds()) },
			Released:  func(_ int, took time.Duration) { s.m.duration.Observe(took.Seconds()) },
			AfterCommit: func(res *study.Result, received int) {
				if s.pauseAfterCommit > 0 {
					s.log.Warn("TEST HOOK: paused between ledger commit and broadcast", "round", res.Event.Round, "received", received, "model_sha256", res.Event.ModelSHA256)
					time.Sleep(s.pauseAfterCommit)
				}
			},
		},
	}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.co = co

	s.mux.HandleFunc("GET /api/ws", s.serveWS)
	s.mux.HandleFunc("GET /api/status", s.serveStatus)
	s.mux.HandleFunc("GET /api/public/{sha256}", s.servePublic)
	s.mux.Handle("GET /api/admin/status", s.admin(http.HandlerFunc(s.serveAdminStatus)))
	s.mux.Handle("GET /api/admin/ledger", s.admin(http.HandlerFunc(s.serveLedger)))
	s.mux.Handle("GET /api/admin/model", s.admin(http.HandlerFunc(s.serveModel)))
	s.mux.Handle("GET /metrics", s.admin(promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{})))
	s.mux.HandleFunc("/api/", http.NotFound)
	if opt.Static != nil {
		s.mux.Handle("/", opt.Static)
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
func (s *Server) State() string { return s.co.Status().State }

// Coordinator returns the server's round driver.
func (s *Server) Coordinator() *study.Coordinator { return s.co }

// helperFunc is opt.Helper, or for a study with a helper a forwarder to
// its URL (memory only) with a timeout of the round slack, at least 10 s
// (nil without a helper).
func helperFunc(opt Options) study.HelperFunc {
	if opt.Helper != nil || opt.Engine.Study.Helper == nil {
		return opt.Helper
	}
	return HelperForwarder(opt.Engine.Study, opt.Engine.File.Helper.LeaderToken, "")
}

// HelperForwarder returns the HelperFunc of a study with a helper: a
// helper.Forwarder to the study's helper URL, showing it the study's
// leader token (study.HelperRef.LeaderToken), that keeps each round's
// forwarded reports in dir (the state directory; "": memory only), with
// a timeout of the round slack, at least 10 s.
func HelperForwarder(st protocol.Study, token, dir string) study.HelperFunc {
	timeout := max(time.Duration(st.RoundSlack), 10*time.Second)
	f := &helper.Forwarder{Client: &helper.Client{URL: st.Helper.URL, Token: token, HTTP: &http.Client{Timeout: timeout}}, Dir: dir}
	return func(st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, []*secagg.Report, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return f.Aggregate(ctx, st, round, reports)
	}
}
