package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Config is one load run.
type Config struct {
	Fedcast         string        // path of the fedcast binary
	Clients         int           // N
	Expected        int           // m
	Rounds          int           // T
	Epsilon         float64       // budget (calibrates c; irrelevant to the load)
	InsecureSeed    int64         // ≥ 0: --insecure-seed (updates buffered, summed in LHA order)
	RoundLength     time.Duration // the study's round_length (one slot of the schedule)
	DialConcurrency int           // dials in flight
	Sources         int           // source addresses 127.0.0.2 …
	Timeout         time.Duration // bound on the whole run
	Hidden          []int         // hidden layers (default: the paper's 128, 64, 32)
	Trace           string        // optional CSV of the coordinator's VmRSS over time
	// Hold keeps the N clients connected and idle this long before the
	// study may start: one more LHA is enrolled (N+1, start_quorum N+1)
	// and joins only after the hold.
	Hold time.Duration
	// ServerEnv are extra environment variables for the coordinator
	// (e.g. GOMEMLIMIT=150MiB).
	ServerEnv []string
	// Spread delays each update by a uniform random time in [0, Spread)
	// after its round_start (clients train for different times); 0 sends
	// every update at once, the worst case for the coordinator's memory.
	Spread time.Duration
	// ServerLog is a file for the coordinator's stderr (with
	// -server-env GODEBUG=gctrace=1: the Go heap after each GC).
	ServerLog string
}

// Result is what a run measured. Memory in MiB.
type Result struct {
	Mode              string    `json:"mode"`
	ServerEnv         []string  `json:"server_env,omitempty"`
	SpreadSeconds     float64   `json:"update_spread_seconds"`
	Clients           int       `json:"clients"`
	Expected          int       `json:"expected_clients"`
	Rounds            int       `json:"rounds"`
	Params            int       `json:"params"`
	UpdateBytes       int       `json:"update_frame_bytes"`
	RlimitNofile      uint64    `json:"rlimit_nofile"`
	ConnectSeconds    float64   `json:"connect_seconds"`
	HoldSeconds       float64   `json:"hold_seconds"`
	MaxOnline         int       `json:"max_online_during_hold"`
	ServerRSSIdle     float64   `json:"server_rss_idle_mib"`
	ServerRSSOnline   float64   `json:"server_rss_all_connected_mib"`
	PerClientKiB      float64   `json:"server_kib_per_connection"`
	ServerRSSRounds   float64   `json:"server_rss_max_during_rounds_mib"`
	ServerHWM         float64   `json:"server_peak_rss_vmhwm_mib"`
	RoundSeconds      []float64 `json:"round_seconds"`
	Received          []int     `json:"round_received"`
	CommitSeconds     float64   `json:"commit_seconds_mean"`
	UpdatesSent       int64     `json:"updates_sent"`
	DummiesSent       int64     `json:"dummies_sent"`
	ResultsReceived   int64     `json:"round_results_received"`
	ClientErrors      int64     `json:"client_errors"`
	FirstClientError  string    `json:"first_client_error,omitempty"`
	ClientProcessHWM  float64   `json:"client_process_peak_rss_mib"`
	TotalSeconds      float64   `json:"total_seconds"`
	UpdatesPerRoundMB float64   `json:"updates_per_round_mib"`
}

func main() {
	var c Config
	flag.StringVar(&c.Fedcast, "fedcast", "", "fedcast binary (go build -o /tmp/fedcast ./coordinator/cmd/fedcast); required")
	flag.IntVar(&c.Clients, "clients", 1000, "LHAs N, all connected at once")
	flag.IntVar(&c.Expected, "expected", 10, "expected clients per round m (q = m/N)")
	flag.IntVar(&c.Rounds, "rounds", 1, "rounds T")
	flag.Float64Var(&c.Epsilon, "epsilon", 2, "privacy budget (only calibrates c)")
	flag.Int64Var(&c.InsecureSeed, "insecure-seed", -1, "≥ 0: run the coordinator with --insecure-seed (research mode)")
	flag.DurationVar(&c.RoundLength, "round-length", 30*time.Second, "the study's round_length: rounds open every this long; updates are taken until 90 % of it")
	flag.IntVar(&c.DialConcurrency, "dial-concurrency", 128, "dials in flight")
	flag.IntVar(&c.Sources, "sources", 32, "source addresses 127.0.0.2 … for the client sockets")
	flag.DurationVar(&c.Timeout, "timeout", 20*time.Minute, "bound on the whole run")
	flag.DurationVar(&c.Hold, "hold", 5*time.Second, "keep all clients connected and idle this long before the rounds")
	flag.StringVar(&c.Trace, "trace", "", "write the coordinator's VmRSS trace (CSV: seconds,rss_mib,phase) here")
	flag.DurationVar(&c.Spread, "spread", 0, "delay each update by uniform [0, spread) after its round_start (0: all at once)")
	flag.StringVar(&c.ServerLog, "server-log", "", "write the coordinator's stderr here")
	serverEnv := flag.String("server-env", "", "comma-separated KEY=VALUE environment for the coordinator (e.g. GOMEMLIMIT=150MiB)")
	out := flag.String("out", "", "write the result as JSON here (default: stdout only)")
	flag.Parse()
	if *serverEnv != "" {
		c.ServerEnv = strings.Split(*serverEnv, ",")
	}
	if c.Fedcast == "" {
		fmt.Fprintln(os.Stderr, "loadtest: -fedcast is required (go build -o /tmp/fedcast ./coordinator/cmd/fedcast)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	res, err := Run(ctx, c, os.Stderr)
	if res != nil {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
		if *out != "" {
			os.WriteFile(*out, append(b, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// raiseNofile raises RLIMIT_NOFILE (soft and hard) to at least n for this
// process and the children it starts, or the soft limit to the hard one
// when raising the hard limit is not permitted.
func raiseNofile(n uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	want := max(n, lim.Cur)
	if want <= lim.Max {
		lim.Cur = want
	} else {
		lim.Cur, lim.Max = want, want // needs CAP_SYS_RESOURCE
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		// No CAP_SYS_RESOURCE (e.g. in a container): the hard limit is
		// the ceiling for this process and the coordinator.
		syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, fmt.Errorf("setrlimit NOFILE %d: %w", lim.Max, err)
		}
	}
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	return lim.Cur, nil
}

// procStatus reads a memory field (VmRSS, VmHWM) of /proc/PID/status in MiB.
func procStatus(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return math.NaN()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			kb, _ := strconv.ParseFloat(f[0], 64)
			return kb / 1024
		}
	}
	return math.NaN()
}

type coordinator struct {
	cmd    *exec.Cmd
	base   string
	admin  string
	exited chan struct{}
	stderr bytes.Buffer
	mu     sync.Mutex
}

func (co *coordinator) get(path string, v any) error {
	req, _ := http.NewRequest("GET", co.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+co.admin)
	c := http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if b, ok := v.(*[]byte); ok {
		*b, err = io.ReadAll(resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func startCoordinator(c Config, dir string, admin string, log io.Writer) (*coordinator, error) {
	args := []string{"serve", "--study", filepath.Join(dir, "study.json"), "--state", filepath.Join(dir, "state"),
		"--addr", "127.0.0.1:0", "--web", filepath.Join(dir, "no-web"), "--log-level", "warn"}
	if c.InsecureSeed >= 0 {
		args = append(args, "--insecure-seed", strconv.FormatInt(c.InsecureSeed, 10))
	}
	co := &coordinator{cmd: exec.Command(c.Fedcast, args...), admin: admin, exited: make(chan struct{})}
	co.cmd.Env = append(os.Environ(), c.ServerEnv...)
	stdout, err := co.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	co.cmd.Stderr = &lockedWriter{mu: &co.mu, w: &co.stderr}
	if c.ServerLog != "" {
		lf, err := os.Create(c.ServerLog)
		if err != nil {
			return nil, err
		}
		co.cmd.Stderr = io.MultiWriter(co.cmd.Stderr, lf) // closed with the process
	}
	if err := co.cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, " on http://"); i >= 0 {
				select {
				case addr <- strings.Fields(line[i+4:])[0]:
				default:
				}
			}
		}
	}()
	go func() { co.cmd.Wait(); close(co.exited) }()
	select {
	case co.base = <-addr:
		return co, nil
	case <-co.exited:
		return nil, fmt.Errorf("fedcast serve exited: %s", co.stderr.String())
	case <-time.After(time.Minute):
		co.cmd.Process.Kill()
		return nil, errors.New("fedcast serve did not start within a minute")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// updates encodes one update frame and one dummy per round, shared by
// every client.
type updates struct {
	mu      sync.Mutex
	frames  map[int][]byte
	dummies map[int][]byte
	params  int
	spread  time.Duration
}

// dummy is round's dummy answer (an unpicked LHA's): an update's size.
func (u *updates) dummy(round int) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b, ok := u.dummies[round]; ok {
		return b
	}
	_, b, err := protocol.Encode(&protocol.Update{Round: round, Dummy: true, Weights: make([]float64, u.params)})
	if err != nil {
		panic(err)
	}
	u.dummies[round] = b
	return b
}

func (u *updates) frame(round int) []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if b, ok := u.frames[round]; ok {
		return b
	}
	rng := rand.New(rand.NewPCG(uint64(round), 9))
	w := make([]float64, u.params)
	for i := range w {
		w[i] = rng.NormFloat64() * 1e-3
	}
	_, b, err := protocol.Encode(&protocol.Update{Round: round, Weights: w})
	if err != nil {
		panic(err)
	}
	u.frames[round] = b
	return b
}

type stats struct {
	welcomed, updates, dummies, results, errors atomic.Int64
	firstErr                                    atomic.Value
}

func (s *stats) fail(err error) {
	s.errors.Add(1)
	s.firstErr.CompareAndSwap(nil, err.Error())
}

// readyFrame is the ready message (protocol.Ready): every connection
// starts not ready, and only a ready one gets round_start.
var readyFrame = []byte(`{"v":1,"type":"ready"}`)

// client is one lightweight LHA: it joins with its token in the
// handshake and says ready (its file is checked), then answers every round_start with the precomputed update
// when picked and the round's dummy when not; round results are read but
// not decoded. ready is called once, when the client is welcomed or has
// failed to join.
func client(ctx context.Context, url, token string, hc *http.Client, up *updates, st *stats, ready func()) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc, Subprotocols: protocol.Subprotocols(token)})
	if err != nil {
		st.fail(err)
		ready()
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(protocol.FrameSize(up.params) + protocol.MaxText)
	if err := ws.Write(ctx, websocket.MessageText, readyFrame); err != nil {
		st.fail(err)
		ready()
		return
	}
	first := true
	var hdr [protocol.HeaderSize + 64]byte // the header and a round_start's metadata
	for {
		typ, r, err := ws.Reader(ctx)
		if err != nil {
			if first {
				ready()
			}
			if ctx.Err() == nil {
				st.fail(err)
			}
			return
		}
		if typ == websocket.MessageBinary {
			n, err := io.ReadFull(r, hdr[:])
			if err != nil && n < protocol.HeaderSize {
				st.fail(err)
				return
			}
			io.Copy(io.Discard, r)
			round := int(binary.LittleEndian.Uint32(hdr[4:]))
			switch protocol.Type(hdr[3]) {
			case protocol.TypeRoundStart:
				meta := hdr[protocol.HeaderSize:n][:min(n-protocol.HeaderSize, int(binary.LittleEndian.Uint32(hdr[12:])))]
				picked := bytes.Contains(meta, []byte(`"picked":1`))
				if up.spread > 0 {
					time.Sleep(time.Duration(rand.Int64N(int64(up.spread))))
				}
				b := up.dummy(round)
				if picked {
					b = up.frame(round)
				}
				if err := ws.Write(ctx, websocket.MessageBinary, b); err != nil {
					st.fail(err)
					return
				}
				if picked {
					st.updates.Add(1)
				} else {
					st.dummies.Add(1)
				}
			case protocol.TypeRoundResult:
				st.results.Add(1)
			}
			continue
		}
		b, err := io.ReadAll(r)
		if err != nil {
			st.fail(err)
			return
		}
		m, err := protocol.Decode(protocol.Text, b)
		if err != nil {
			st.fail(err)
			return
		}
		switch m := m.(type) {
		case *protocol.Welcome:
			if first {
				first = false
				st.welcomed.Add(1)
				ready()
			}
		case *protocol.Finished:
			ws.Close(websocket.StatusNormalClosure, "")
			return
		case *protocol.Error:
			if first {
				ready()
			}
			st.fail(m)
			if m.Code.Fatal() {
				return
			}
		}
	}
}
