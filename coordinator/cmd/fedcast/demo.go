package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/coordinator/web"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
	"github.com/fedcast/fedcast/wasm/client"
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
	interval, deadline     time.Duration
	once                   bool
}

func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "demo", "demo [--addr 127.0.0.1:8080] [--state DIR] [--web DIR]")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	state := fs.String("state", filepath.Join(os.TempDir(), "fedcast-demo"), "state directory (a restart with the same one resumes)")
	webDir := fs.String("web", web.DefaultDir, "directory of the built browser app")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	var o demoOptions
	fs.IntVar(&o.lhas, "lhas", 199, "simulated LHAs (plus one seat for you)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds per study (default: the design's, 10)")
	fs.IntVar(&o.expected, "expected", 0, "expected LHAs per round m (default: the design's, all of them; DP noise on the mean is c·S/m: too few LHAs per round and it drowns the model)")
	fs.Float64Var(&o.epsilon, "epsilon", 3, "privacy budget ε per study")
	fs.DurationVar(&o.interval, "interval", 6*time.Second, "least time between round starts")
	fs.DurationVar(&o.deadline, "deadline", 20*time.Second, "round deadline (your seat counts as a dropout if it misses it)")
	fs.BoolVar(&o.once, "once", false, "stop after one study has finished instead of starting a fresh one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.lhas < 1 || o.expected < 0 || o.expected > o.lhas+1 || o.rounds < 0 {
		return usagef("", "--lhas must be ≥ 1, --expected in [1, lhas+1] and --rounds ≥ 1")
	}
	log, err := newLogger(env.Stderr, *level)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*state, 0o700); err != nil {
		return err
	}
	secrets, err := loadDemoSecrets(*state, o.lhas)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	var current atomic.Pointer[coordinator]
	hs := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := current.Load(); c != nil {
			c.srv.ServeHTTP(w, r)
			return
		}
		http.Error(w, "the next demo study is being prepared", http.StatusServiceUnavailable)
	})}
	go hs.Serve(ln)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	static := web.Handler(*webDir)

	for {
		dir, f, raw, data, err := demoStudy(*state, secrets, o)
		if err != nil {
			return err
		}
		// A restarted demo resumes after the simulated LHAs (its quorum)
		// have reconnected, or one round deadline at most.
		c, err := openCoordinator(f, raw, dir, nil, static, nil, 0, log)
		if err != nil {
			return err
		}
		current.Store(c)
		fmt.Fprintf(env.Stdout, "fedcast demo: study %q (%s) on %s\n", f.Name, dir, base)
		fmt.Fprintf(env.Stdout, "  join as an LHA in your browser: %s/join#%s\n", base, secrets.Seat)
		fmt.Fprintf(env.Stdout, "  your seat's synthetic case data: %s\n", filepath.Join(dir, "seat.csv"))
		fmt.Fprintf(env.Stdout, "  coordinator dashboard:          %s/admin#%s\n", base, secrets.Admin)
		fmt.Fprintf(env.Stdout, "  %d simulated LHAs + your seat; m=%d, T=%d, ε=%g; rounds start every %v\n",
			o.lhas, o.expected, o.rounds, o.epsilon, o.interval)

		sctx, stopSims := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, tok := range secrets.Simulated {
			wg.Add(1)
			go func() {
				defer wg.Done()
				simulateLHA(sctx, base+"/join#"+tok, data[i], log)
			}()
		}
		err = c.srv.Run(ctx)
		stopSims()
		wg.Wait()
		if err == nil {
			fmt.Fprintf(env.Stdout, "demo study finished: %d rounds, ε %.4g (%s)\n", c.engine.Rounds(), c.engine.EpsilonSpent(), c.engine.FinishedReason)
		}
		if err != nil || o.once {
			current.Store(nil)
			c.close()
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		// Leave the finished study on show for a while, then start afresh.
		select {
		case <-ctx.Done():
			current.Store(nil)
			c.close()
			return nil
		case <-time.After(30 * time.Second):
		}
		current.Store(nil)
		c.close()
	}
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
	f = &study.File{Version: study.FileVersion, Name: fmt.Sprintf("fedcast demo #%d", k), Epsilon: o.epsilon,
		Rounds: o.rounds, ExpectedClients: o.expected, From: "2020-11-01", To: "2020-12-01",
		RoundDeadline: study.Duration(o.deadline), RoundInterval: study.Duration(o.interval),
		StartQuorum: o.lhas, AdminTokenSHA256: study.HashToken(sec.Admin)}
	for i, tok := range sec.Simulated {
		f.LHAs = append(f.LHAs, study.LHA{Name: fmt.Sprintf("Simulated LHA %02d", i+1), TokenSHA256: study.HashToken(tok)})
	}
	f.LHAs = append(f.LHAs, study.LHA{Name: "Your seat (browser)", TokenSHA256: study.HashToken(sec.Seat)})
	f.FillDesign(model.Default)
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
		s, err := client.Join(ctx, link, "", nil)
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(500 * time.Millisecond)
			}
			continue
		}
		err = s.Run(ctx, data, client.Observer{})
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
