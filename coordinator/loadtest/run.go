package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fedcast/fedcast/coordinator/server"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Run performs one load run.
func Run(ctx context.Context, c Config, log io.Writer) (*Result, error) {
	t0 := time.Now()
	if c.Expected > c.Clients || c.Clients < 1 {
		return nil, fmt.Errorf("need 1 ≤ expected (%d) ≤ clients (%d)", c.Expected, c.Clients)
	}
	lim, err := raiseNofile(uint64(c.Clients) + 4096)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fedcast-loadtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	f, secrets, err := writeStudy(c, dir)
	if err != nil {
		return nil, err
	}
	res := newResult(c, f.Public(0, false).Params, lim)

	co, err := startCoordinator(c, dir, secrets.Admin, log)
	if err != nil {
		return nil, err
	}
	defer co.stop()
	pid := co.cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)
	res.ServerRSSIdle = procStatus(pid, "VmRSS")
	rss := startSampler(pid, t0)

	cl := newClients(ctx, c, co, res.Params)
	defer cl.cancel()
	fmt.Fprintf(log, "connecting %d clients to %s …\n", c.Clients, co.base)
	tc := time.Now()
	if err := cl.connect(ctx, secrets.LHAs[:c.Clients]); err != nil {
		return res, err
	}
	res.ConnectSeconds = time.Since(tc).Seconds()
	rss.setPhase("hold")
	fmt.Fprintf(log, "%d welcomed in %.1f s (%d errors); holding for %v\n", cl.st.welcomed.Load(), res.ConnectSeconds, cl.st.errors.Load(), c.Hold)
	if err := hold(co, c.Hold, res); err != nil {
		return res, err
	}
	res.ServerRSSOnline = procStatus(pid, "VmRSS")
	fmt.Fprintf(log, "held %d connections for %.1f s; coordinator RSS %.0f MiB; starting the rounds\n", res.MaxOnline, res.HoldSeconds, res.ServerRSSOnline)
	rss.setPhase("rounds")
	cl.start(secrets.LHAs[c.Clients], func() {}) // the last LHA, after the hold

	if err := watch(ctx, co, res); err != nil {
		return res, err
	}
	res.CommitSeconds = commitSeconds(co)
	res.ServerHWM = procStatus(pid, "VmHWM")
	trace := rss.stop()
	res.ServerRSSRounds = trace.peak("rounds")
	if c.Trace != "" {
		os.WriteFile(c.Trace, trace.csv(), 0o644)
	}
	res.PerClientKiB = (res.ServerRSSOnline - res.ServerRSSIdle) * 1024 / float64(c.Clients)
	cl.finish(res)
	res.ClientProcessHWM = procStatus(os.Getpid(), "VmHWM")
	res.TotalSeconds = time.Since(t0).Seconds()
	return res, nil
}

// writeStudy creates the study of N+1 LHAs (the last one joins after the
// hold) and writes it to dir/study.json.
func writeStudy(c Config, dir string) (*study.File, *study.Secrets, error) {
	names := make([]string, c.Clients+1)
	for i := range names {
		names[i] = fmt.Sprintf("LHA %06d", i+1)
	}
	f, secrets, err := study.Create(study.CreateOptions{Names: names, Template: study.File{
		Settings: protocol.Settings{Name: "load test", Epsilon: c.Epsilon, Rounds: c.Rounds, ExpectedClients: c.Expected, Hidden: c.Hidden,
			RoundLength: study.Duration(c.RoundLength),
		},
	}})
	if err != nil {
		return nil, nil, err
	}
	raw, err := f.Marshal()
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "study.json"), raw, 0o600); err != nil {
		return nil, nil, err
	}
	return f, secrets, nil
}

// newResult is the run's Result before anything is measured.
func newResult(c Config, params int, lim uint64) *Result {
	res := &Result{Mode: "secure (streaming aggregation)", Clients: c.Clients, Expected: c.Expected, Rounds: c.Rounds,
		Params: params, RlimitNofile: lim, UpdateBytes: len((&updates{frames: map[int][]byte{}, params: params}).frame(1))}
	res.ServerEnv = c.ServerEnv
	res.SpreadSeconds = c.Spread.Seconds()
	if c.InsecureSeed >= 0 {
		res.Mode = "insecure-seed (updates buffered, summed in LHA order)"
	}
	res.UpdatesPerRoundMB = float64(c.Expected) * float64(8*params) / (1 << 20)
	return res
}

// stop ends the coordinator: SIGTERM, then a kill after 30 s.
func (co *coordinator) stop() {
	co.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-co.exited:
	case <-time.After(30 * time.Second):
		co.cmd.Process.Kill()
		<-co.exited
	}
}

// A sampler reads the coordinator's VmRSS every 20 ms, tagged with the
// run's phase.
type sampler struct {
	phase atomic.Value
	mu    sync.Mutex
	trace rssTrace
	stopc chan struct{}
	done  chan struct{}
}

type rssPoint struct {
	t     float64
	rss   float64
	phase string
}

type rssTrace []rssPoint

func startSampler(pid int, t0 time.Time) *sampler {
	s := &sampler{stopc: make(chan struct{}), done: make(chan struct{})}
	s.phase.Store("connecting")
	go func() {
		defer close(s.done)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-s.stopc:
				return
			case <-tk.C:
				r := procStatus(pid, "VmRSS")
				s.mu.Lock()
				s.trace = append(s.trace, rssPoint{time.Since(t0).Seconds(), r, s.phase.Load().(string)})
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *sampler) setPhase(p string) { s.phase.Store(p) }

// stop ends the sampling and returns the trace.
func (s *sampler) stop() rssTrace {
	close(s.stopc)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trace
}

// peak is the largest RSS sampled in phase (0 if none).
func (tr rssTrace) peak(phase string) float64 {
	var m float64
	for _, p := range tr {
		if p.phase == phase {
			m = math.Max(m, p.rss)
		}
	}
	return m
}

// csv is the trace as CSV: seconds, RSS in MiB, phase.
func (tr rssTrace) csv() []byte {
	var b strings.Builder
	b.WriteString("seconds,rss_mib,phase\n")
	for _, p := range tr {
		fmt.Fprintf(&b, "%.3f,%.1f,%s\n", p.t, p.rss, p.phase)
	}
	return []byte(b.String())
}

// clients are the run's simulated LHAs, each on its own websocket from
// one of the source addresses.
type clients struct {
	c      Config
	url    string
	hc     *http.Client
	up     *updates
	st     *stats
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newClients(ctx context.Context, c Config, co *coordinator, params int) *clients {
	var next atomic.Uint64
	sources := max(1, c.Sources)
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			i := next.Add(1)
			d := net.Dialer{Timeout: time.Minute, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%uint64(sources)))}}
			return d.DialContext(ctx, network, addr)
		},
	}}
	cl := &clients{c: c, url: "ws" + strings.TrimPrefix(co.base, "http") + "/api/ws", hc: hc,
		up: &updates{frames: map[int][]byte{}, dummies: map[int][]byte{}, params: params, spread: c.Spread}, st: &stats{}}
	cl.ctx, cl.cancel = context.WithCancel(ctx)
	return cl
}

// start runs one client with token; ready is called once it is welcomed
// (or has failed).
func (cl *clients) start(token string, ready func()) {
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		defer ready()
		client(cl.ctx, cl.url, token, cl.hc, cl.up, cl.st, ready)
	}()
}

// connect starts a client for every token, at most DialConcurrency dials
// in flight, and waits until each is welcomed or has failed.
func (cl *clients) connect(ctx context.Context, tokens []string) error {
	joined := make(chan struct{}, len(tokens))
	sem := make(chan struct{}, max(1, cl.c.DialConcurrency)) // dials in flight
	go func() {
		for _, tok := range tokens {
			select {
			case sem <- struct{}{}:
			case <-cl.ctx.Done():
				return
			}
			var once sync.Once
			cl.start(tok, func() { once.Do(func() { <-sem; joined <- struct{}{} }) })
		}
	}()
	for range tokens {
		select {
		case <-ctx.Done():
			return fmt.Errorf("connecting: %w (%d welcomed, %d errors, first: %v)", ctx.Err(), cl.st.welcomed.Load(), cl.st.errors.Load(), cl.st.firstErr.Load())
		case <-joined:
		}
	}
	return nil
}

// finish lets the clients read their finished messages, stops them after
// 30 s, and records what they sent and received.
func (cl *clients) finish(res *Result) {
	done := make(chan struct{})
	go func() { cl.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cl.cancel()
		<-done
	}
	res.UpdatesSent = cl.st.updates.Load()
	res.DummiesSent = cl.st.dummies.Load()
	res.ResultsReceived = cl.st.results.Load()
	res.ClientErrors = cl.st.errors.Load()
	if e, ok := cl.st.firstErr.Load().(string); ok {
		res.FirstClientError = e
	}
}

// hold keeps the connections idle for d (and until the coordinator has
// reported them online), recording the most it saw online.
func hold(co *coordinator, d time.Duration, res *Result) error {
	start := time.Now()
	for time.Since(start) < d || res.MaxOnline == 0 {
		var a server.AdminStatus
		if err := co.get("/api/admin/status", &a); err != nil {
			return err
		}
		res.MaxOnline = max(res.MaxOnline, a.Online)
		time.Sleep(250 * time.Millisecond)
	}
	res.HoldSeconds = time.Since(start).Seconds()
	return nil
}

// watch polls the study until it finishes and records its rounds.
func watch(ctx context.Context, co *coordinator, res *Result) error {
	for {
		var a server.AdminStatus
		if err := co.get("/api/admin/status", &a); err != nil {
			return err
		}
		if a.State == "finished" {
			for _, p := range a.Participation {
				res.RoundSeconds = append(res.RoundSeconds, p.Duration.Seconds())
				res.Received = append(res.Received, p.Received)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the study: %w", ctx.Err())
		case <-co.exited:
			return fmt.Errorf("the coordinator exited: %s", co.stderr.String())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// commitSeconds is the coordinator's mean round commit time from its
// metrics (0 when unavailable).
func commitSeconds(co *coordinator) float64 {
	var metrics []byte
	if err := co.get("/metrics", &metrics); err != nil {
		return 0
	}
	var sum, n float64
	for _, line := range strings.Split(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, "fedcast_round_commit_seconds_sum "); ok {
			sum, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(line, "fedcast_round_commit_seconds_count "); ok {
			n, _ = strconv.ParseFloat(v, 64)
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}
