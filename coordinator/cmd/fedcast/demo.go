package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

func init() {
	register(&command{
		Name:    "demo",
		Summary: "coordinator + simulated LHAs on synthetic data + a seat for you in the browser",
		Run:     runDemo,
	})
}

// demoSecrets are the demo's tokens, kept in the state directory so that a
// restarted demo resumes with the same links.
type demoSecrets struct {
	Admin     string   `json:"admin"`
	Seat      string   `json:"seat"`
	Simulated []string `json:"simulated"`
}

type demoOptions struct {
	lhas, rounds, expected int
	epsilon                float64
	roundLength            time.Duration
	campaigns              int           // a continuing study of this many campaigns (1: one)
	every                  time.Duration // between campaign starts (0: the campaign's rounds plus 3 round lengths)
	once                   bool
	start                  string           // "seat" (wait for the browser seat) or "now"
	seatTime               time.Duration    // after the seat connects, before the rounds begin
	helper                 *study.HelperRef // the in-process helper (nil: --no-helper)
}

// The seat's name in the demo study file.
const demoSeatName = "Your seat (browser)"

func runDemo(ctx context.Context, env *Env, args []string) error {
	d, err := parseDemo(env, args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.state, 0o700); err != nil {
		return err
	}
	if d.secrets, err = loadDemoSecrets(d.state, d.o.lhas); err != nil {
		return err
	}
	ln, err := listen(d.addr)
	if err != nil {
		return err
	}
	d.base = "http://" + ln.Addr().String()
	if !d.noHelper {
		stop, err := startDemoHelper(ctx, d.state, d.helperAddr, ln.Addr().String(), &d.o, env.Stdout)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
	}
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(d.serveHTTP)}
	go hs.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	d.static = webHandler(d.webDir, env.Stdout)
	for {
		again, err := d.runStudy(ctx)
		if err != nil || !again {
			return err
		}
	}
}

// demo is one `fedcast demo`: its flags and the coordinator of the study
// on show.
type demo struct {
	env                                    *Env
	o                                      demoOptions
	addr, state, webDir, helperAddr, level string
	noHelper                               bool
	log                                    *slog.Logger
	secrets                                *demoSecrets
	base                                   string
	static                                 http.Handler
	current                                atomic.Pointer[coordinator]
	startNow                               chan struct{}
	waiting                                atomic.Bool
}

// parseDemo reads demo's flags.
func parseDemo(env *Env, args []string) (*demo, error) {
	d := &demo{env: env, startNow: make(chan struct{}, 1)}
	fs := newFlagSet(env, "demo", "demo [--addr 127.0.0.1:8080] [--state DIR] [--web DIR]")
	fs.StringVar(&d.addr, "addr", envAddr(env), "listen address (default from the environment variable FEDCAST_ADDR when set)")
	fs.StringVar(&d.state, "state", filepath.Join(os.TempDir(), "fedcast-demo"), "state directory (a restart with the same one resumes)")
	fs.StringVar(&d.webDir, "web", "", "directory of a built browser app to serve instead of the one built into this binary")
	fs.StringVar(&d.level, "log-level", "info", "log level: debug, info, warn, error")
	o := &d.o
	fs.IntVar(&o.lhas, "lhas", 199, "simulated LHAs (plus one seat for you)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds per study (default: the design's, 5)")
	fs.IntVar(&o.expected, "expected", 0, "expected LHAs per round m (default: the design's, all of them; DP noise on the mean is c·S/m: too few LHAs per round and it drowns the model)")
	fs.Float64Var(&o.epsilon, "epsilon", 3, "privacy budget ε per study")
	fs.DurationVar(&o.roundLength, "round-length", 20*time.Second, "round length: rounds open every this long; updates are taken until 90 % of it (your seat counts as a dropout if it misses that)")
	fs.IntVar(&o.campaigns, "campaigns", 3, "training campaigns of a continuing study (--rounds each; 1: a single campaign); between them the seat can forecast with the latest model")
	fs.DurationVar(&o.every, "every", 0, "time between campaign starts (0: the campaign's rounds plus three round lengths)")
	fs.BoolVar(&o.once, "once", false, "stop after one study has finished instead of starting a fresh one")
	fs.StringVar(&o.start, "start", "seat", "when the rounds begin: seat (after your browser seat has opened the join link and had --seat-time to choose its file, or at POST /api/demo/start) or now")
	fs.DurationVar(&o.seatTime, "seat-time", 45*time.Second, "with --start seat: time between your page connecting and the first round, to read the page and choose the file")
	fs.StringVar(&d.helperAddr, "helper-addr", "", "listen address of the in-process helper, the second server of secure aggregation (default: --addr's port + 1)")
	fs.BoolVar(&d.noHelper, "no-helper", false, "run without a helper: the coordinator then sees each clipped update")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if o.start != "seat" && o.start != "now" {
		return nil, usagef("", "--start must be seat or now")
	}
	if o.lhas < 1 || o.expected < 0 || o.expected > o.lhas+1 || o.rounds < 0 || o.campaigns < 1 {
		return nil, usagef("", "--lhas must be ≥ 1, --expected in [1, lhas+1], --rounds ≥ 1 and --campaigns ≥ 1")
	}
	var err error
	d.log, err = newLogger(env.Stderr, d.level)
	return d, err
}

// serveHTTP serves the demo's start route and, between studies, says the
// next one is being prepared; everything else goes to the current study.
func (d *demo) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == demoStartPath {
		serveDemoStart(w, r, d.secrets.Admin, &d.waiting, d.startNow)
		return
	}
	if c := d.current.Load(); c != nil {
		c.srv.ServeHTTP(w, r)
		return
	}
	http.Error(w, "the next demo study is being prepared", http.StatusServiceUnavailable)
}

// runStudy shows one study from its start (or its resumption) to its end,
// and reports whether a fresh one follows.
func (d *demo) runStudy(ctx context.Context) (again bool, err error) {
	out := d.env.Stdout
	dir, f, raw, data, err := demoStudy(d.state, d.secrets, d.o)
	if err != nil {
		return false, err
	}
	// A restarted demo resumes after the simulated LHAs (its quorum)
	// have reconnected, or one round length at most.
	c, err := openCoordinator(f, raw, dir, nil, d.static, nil, 0, d.log)
	if err != nil {
		return false, err
	}
	d.current.Store(c)
	defer func() {
		d.current.Store(nil)
		c.close()
	}()
	fmt.Fprintf(out, "fedcast demo: study %q (%s) on %s\n", f.Name, dir, d.base)
	fmt.Fprintf(out, "  join as an LHA in your browser: %s/join#%s\n", d.base, d.secrets.Seat)
	fmt.Fprintf(out, "  your seat's synthetic case data: %s\n", filepath.Join(dir, "seat.csv"))
	fmt.Fprintf(out, "  coordinator dashboard:          %s/admin#%s\n", d.base, d.secrets.Admin)
	printDemoStudy(out, f, d.o.lhas)

	if d.o.start == "seat" && c.engine.Rounds() == 0 {
		d.waiting.Store(true)
		err := awaitSeat(ctx, c, d.secrets.Admin, d.o.seatTime, d.startNow, d.base, out)
		d.waiting.Store(false)
		if err != nil {
			return false, ignoreCanceled(err)
		}
	}
	sctx, stopSims := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, tok := range d.secrets.Simulated {
		wg.Add(1)
		go func() {
			defer wg.Done()
			simulateLHA(sctx, d.base+"/join#"+tok, data[i], d.log)
		}()
	}
	err = c.srv.Run(ctx)
	stopSims()
	wg.Wait()
	if err == nil {
		fmt.Fprintf(out, "demo study finished: %d rounds, ε %.4g (%s)\n", c.engine.Rounds(), c.engine.EpsilonSpent(), c.engine.Finished())
	}
	if err != nil || d.o.once {
		return false, ignoreCanceled(err)
	}
	// Leave the finished study on show for a while, then start afresh.
	select {
	case <-ctx.Done():
		return false, nil
	case <-time.After(30 * time.Second):
	}
	return true, nil
}

// ignoreCanceled is err, or nil when the demo was stopped.
func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// demoStartPath starts the demo's rounds at once (POST, admin token);
// GET says whether the demo is waiting ({"waiting": true}), for the
// dashboard's start button.
// (The dashboard's ui.DemoStartPath; a test keeps them equal without the
// command linking the UI package.)
const demoStartPath = "/api/demo/start"

func serveDemoStart(w http.ResponseWriter, r *http.Request, admin string, waiting *atomic.Bool, start chan<- struct{}) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(study.HashToken(tok)), []byte(study.HashToken(admin))) != 1 {
		http.Error(w, "demo: the admin token is required", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "{\"waiting\":%v}\n", waiting.Load())
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "demo: POST to start the rounds", http.StatusMethodNotAllowed)
		return
	}
	select {
	case start <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusNoContent)
}

// awaitSeat paces a fresh demo study for a person: the simulated LHAs
// (the study's start quorum) are held back until the browser seat has
// opened its join link and then had seatTime to read the page and choose
// its file, or until POST /api/demo/start.
func awaitSeat(ctx context.Context, c *coordinator, admin string, seatTime time.Duration, start <-chan struct{}, base string, out io.Writer) error {
	fmt.Fprintf(out, "  waiting for you: open the join link above; the rounds begin %v after your page has connected.\n", seatTime)
	fmt.Fprintf(out, "  to begin at once: press Start on the dashboard, or curl -X POST -H 'Authorization: Bearer %s' %s%s\n", admin, base, demoStartPath)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !seatOnline(c, admin) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-start:
			fmt.Fprintln(out, "  start requested: the rounds begin now")
			return nil
		case <-tick.C:
		}
	}
	fmt.Fprintf(out, "  your seat is connected: the rounds begin in %v (choose seat.csv on the page and press Join meanwhile)\n", seatTime)
	t := time.NewTimer(seatTime)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-start:
		fmt.Fprintln(out, "  start requested: the rounds begin now")
	case <-t.C:
	}
	return nil
}

// seatOnline asks the coordinator's admin status whether the browser seat
// is connected.
func seatOnline(c *coordinator, admin string) bool {
	req := httptest.NewRequest(http.MethodGet, "/api/admin/status", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	rec := httptest.NewRecorder()
	c.srv.ServeHTTP(rec, req)
	var st protocol.AdminStatus
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil {
		return false
	}
	for _, l := range st.LHAs {
		if l.Name == demoSeatName && l.Online {
			return true
		}
	}
	return false
}

func loadDemoSecrets(state string, n int) (*demoSecrets, error) {
	path := filepath.Join(state, "secrets.json")
	var s demoSecrets
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("demo: %s: %w", path, err)
		}
		if len(s.Simulated) == n && s.Admin != "" && s.Seat != "" {
			return &s, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s = demoSecrets{Admin: study.NewToken(), Seat: study.NewToken()}
	for range n {
		s.Simulated = append(s.Simulated, study.NewToken())
	}
	b, _ = json.MarshalIndent(s, "", "  ")
	return &s, os.WriteFile(path, b, 0o600)
}

// demoStudy returns the demo study to run: the latest one in state if it
// has not finished, else a fresh one. data[i] is simulated LHA i's series.
func demoStudy(state string, sec *demoSecrets, o demoOptions) (dir string, f *study.File, raw []byte, data []*series.Dataset, err error) {
	entries, _ := os.ReadDir(state)
	var nums []int
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "study-"); ok && e.IsDir() {
			if k, err := strconv.Atoi(n); err == nil {
				nums = append(nums, k)
			}
		}
	}
	sort.Ints(nums)
	k := 1
	if len(nums) > 0 {
		k = nums[len(nums)-1]
		if demoFinished(filepath.Join(state, fmt.Sprintf("study-%d", k))) {
			k++
		}
	}
	dir = filepath.Join(state, fmt.Sprintf("study-%d", k))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, nil, nil, err
	}
	ds, _, err := synth.Generate(synth.Options{Areas: o.lhas + 1, Seed: uint64(k)})
	if err != nil {
		return "", nil, nil, nil, err
	}
	for i := range o.lhas {
		data = append(data, &series.Dataset{Regions: []*series.Region{ds.Regions[i]}})
	}
	seat := &series.Dataset{Regions: []*series.Region{ds.Regions[o.lhas]}}
	if err := writeSeries(filepath.Join(dir, "seat.csv"), seat); err != nil {
		return "", nil, nil, nil, err
	}
	path := filepath.Join(dir, "study.json")
	if b, err := os.ReadFile(path); err == nil {
		f, err := study.Parse(b)
		return dir, f, b, data, err
	}
	f = &study.File{Version: study.FileVersion,
		StartQuorum: o.lhas, AdminTokenSHA256: study.HashToken(sec.Admin), Helper: o.helper,
		Settings: protocol.Settings{Name: fmt.Sprintf("fedcast demo #%d", k), Epsilon: o.epsilon,
			Rounds: o.rounds, ExpectedClients: o.expected, From: "2020-11-01", To: "2020-12-01",
			RoundLength: study.Duration(o.roundLength)}}
	for i, tok := range sec.Simulated {
		f.LHAs = append(f.LHAs, study.LHA{Name: fmt.Sprintf("Simulated LHA %02d", i+1), TokenSHA256: study.HashToken(tok)})
	}
	f.LHAs = append(f.LHAs, study.LHA{Name: demoSeatName, TokenSHA256: study.HashToken(sec.Seat)})
	f.FillDesign(model.Default)
	if o.campaigns > 1 {
		// A continuing study: --rounds (or the design's) per campaign.
		f.Campaigns, f.Every = o.campaigns, study.Duration(o.every)
		if o.every == 0 {
			f.Every = study.Duration(time.Duration(f.Rounds+3) * o.roundLength)
		}
		f.Rounds *= o.campaigns
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return "", nil, nil, nil, err
	}
	if _, err := f.Calibrate(); err != nil {
		return "", nil, nil, nil, err
	}
	raw, err = f.Marshal()
	if err != nil {
		return "", nil, nil, nil, err
	}
	return dir, f, raw, data, os.WriteFile(path, raw, 0o600)
}

func demoFinished(dir string) bool {
	path := filepath.Join(dir, "ledger.db")
	if _, err := os.Stat(path); err != nil {
		return false
	}
	l, err := ledger.Open(path)
	if err != nil {
		return false
	}
	defer l.Close()
	reason, _, _ := l.Finished()
	return reason != ""
}

func writeSeries(path string, d *series.Dataset) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := series.Write(fh, d); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// simulateLHA is one simulated LHA: the same client code as the browser,
// over a real loopback websocket, rejoining until the study ends or ctx does.
func simulateLHA(ctx context.Context, link string, data *series.Dataset, log *slog.Logger) {
	for ctx.Err() == nil {
		s, err := lhaconn.Join(ctx, link, "", nil)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(500 * time.Millisecond)
			}
			continue
		}
		err = s.Run(ctx, data, session.Observer{})
		s.Close()
		if err == nil {
			return
		}
		if ctx.Err() == nil {
			log.Warn("simulated LHA stopped", "err", err)
			time.Sleep(time.Second)
		}
	}
}

// envAddr is the demo's default address: FEDCAST_ADDR when set (make run
// ADDR=…), else 127.0.0.1:8080.
func envAddr(env *Env) string {
	if env.Getenv != nil && env.Getenv("FEDCAST_ADDR") != "" {
		return env.Getenv("FEDCAST_ADDR")
	}
	return "127.0.0.1:8080"
}

// printDemoStudy states the demo's study: its LHAs, rounds and budget,
// and its campaigns when it is a continuing one.
func printDemoStudy(w io.Writer, f *study.File, lhas int) {
	fmt.Fprintf(w, "  %d simulated LHAs + your seat; %d expected per round, %d rounds, ε=%g; rounds start every %v\n",
		lhas, f.ExpectedClients, f.Rounds, f.Epsilon, time.Duration(f.RoundLength))
	if f.Campaigns > 1 {
		fmt.Fprintf(w, "  a continuing study: %d campaigns of %d rounds, one every %v, ε=%g for all of them; between campaigns press \"Forecast this week with the latest model\" (nothing is sent)\n",
			f.Campaigns, f.Rounds/f.Campaigns, time.Duration(f.Every), f.Epsilon)
	}
}

// startDemoHelper runs the demo's helper (the second server of secure
// aggregation) in process on addr (default: the coordinator's port + 1),
// with its key and ledgers under state/helper (a restart keeps them), and
// sets o.helper. stop shuts it down.
func startDemoHelper(ctx context.Context, state, addr, coordAddr string, o *demoOptions, w io.Writer) (stop func(), err error) {
	dir := filepath.Join(state, "helper")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	keyPath := filepath.Join(dir, "helper.key")
	k, err := loadHelperKey(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		if k, err = secagg.GenerateKey(); err == nil {
			var b []byte
			if b, err = k.MarshalPrivate(); err == nil {
				err = writeNew(keyPath, b)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	h, err := helper.New(k, filepath.Join(dir, "state"), nil)
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	if addr == "" {
		host, port, _ := net.SplitHostPort(coordAddr)
		p, _ := strconv.Atoi(port)
		if ln, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p+1))); err != nil {
			ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")) // port + 1 is taken: any free one
		}
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("demo: the helper's port: %w (choose another with --helper-addr, or --no-helper)", err)
	}
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { serveHelper(hctx, h, ln); close(done) }()
	pk := k.PublicKey()
	o.helper = &study.HelperRef{URL: "http://" + ln.Addr().String(), PublicKey: pk.Bytes(), Fingerprint: pk.Fingerprint(), Operator: "the demo's helper",
		LeaderToken: study.NewToken()}
	fmt.Fprintf(w, "fedcast demo: helper (the second server of secure aggregation) at %s, key fingerprint %s\n", o.helper.URL, pk.Fingerprint())
	return func() { cancel(); <-done; h.Close() }, nil
}
