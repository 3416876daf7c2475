package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/server"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/secagg"
)

func init() {
	register(&command{
		Name:    "serve",
		Summary: "run the coordinator of a live study (websockets, privacy ledger, dashboard API)",
		Run:     runServe,
	})
}

// seedFlag is an optional uint64 flag (--insecure-seed).
type seedFlag struct{ v *uint64 }

func (s *seedFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strconv.FormatUint(*s.v, 10)
}

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("want a non-negative integer: %w", err)
	}
	s.v = &n
	return nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("use debug, info, warn or error", "bad --log-level %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), nil
}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "serve --study FILE [--addr 127.0.0.1:8080] [--state DIR] [--restart-grace D] [--insecure-seed N] [--web DIR] [--origin HOST]...")
	studyPath := fs.String("study", "", "study file (create one with 'fedcast study new'); required")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	state := fs.String("state", "", "state directory holding ledger.db (default: FILE without .json + \".state\")")
	webDir := fs.String("web", "", "directory of a built browser app to serve instead of the one built into this binary")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	grace := fs.Duration("restart-grace", 0, "after a restart, wait at most this long for the study's quorum of LHAs to reconnect before the next round (0: the study file's restart_grace, by default one round length)")
	var seed seedFlag
	fs.Var(&seed, "insecure-seed", "RESEARCH ONLY: reproducible sampling and noise from this seed (no privacy guarantee)")
	var origins listFlag
	fs.Var(&origins, "origin", "extra browser origin allowed on the websocket (host pattern; repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *grace < 0 {
		return usagef("", "--restart-grace must be ≥ 0")
	}
	if *studyPath == "" {
		return usagef("create a study with 'fedcast study new --lhas 3 --epsilon 2 --rounds 20 --expected 2 --out study.json'", "--study is required")
	}
	log, err := newLogger(env.Stderr, *level)
	if err != nil {
		return err
	}
	f, raw, err := study.Load(*studyPath)
	if errors.Is(err, os.ErrNotExist) {
		return usagef("--study is the study file that 'fedcast study new --out FILE' wrote: check the path, or create the study first", "%s", forPeople(err.Error()))
	}
	if err != nil {
		return err
	}
	if *state == "" {
		*state = strings.TrimSuffix(*studyPath, filepath.Ext(*studyPath)) + ".state"
	}
	if err := checkPublicFiles(f); err != nil {
		return err
	}
	if err := checkHelperKey(ctx, f, env.Stderr); err != nil {
		return err
	}
	ln, err := listen(*addr)
	if err != nil {
		return err
	}
	c, err := openCoordinator(f, raw, *state, seed.v, webHandler(*webDir, env.Stdout), origins, *grace, log)
	if errors.Is(err, study.ErrMismatch) {
		// The engine's words, without its sentinel: "the study: " would
		// lose "study: " to forPeople.
		detail := strings.TrimPrefix(err.Error(), study.ErrMismatch.Error()+": ")
		err = usagef("a state directory belongs to the study file it was started with, for good: give that file, or a new study its own --state DIR "+
			"(a study file edited after 'fedcast study new' is another study)", "the state directory %s is not %s's: %s", *state, *studyPath, detail)
	}
	if err != nil {
		ln.Close()
		return err
	}
	defer c.close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.Stdout, "fedcast coordinator for %q on %s (state %s)\n", f.Name, base, *state)
	fmt.Fprintf(env.Stdout, "  public status: %s/api/status\n", base)
	printLinksHint(env.Stdout, f, base)
	for _, l := range f.WindowLines() {
		fmt.Fprintln(env.Stdout, "  "+l)
	}
	if seed.v != nil {
		fmt.Fprintf(env.Stdout, "  WARNING: --insecure-seed %d: reproducible noise, NO privacy guarantee\n", *seed.v)
	}
	return c.serve(ctx, ln, false)
}

// checkPublicFiles checks, before the coordinator starts, that each
// public input the study file declares is on disk with the declared
// bytes: every LHA checks its SHA-256, and none can join a weekly study
// without it. Without this check the coordinator started and answered
// each LHA's download with an error, which only its log explained.
func checkPublicFiles(f *study.File) error {
	for _, p := range f.PublicInputs {
		if p.Path == "" {
			continue
		}
		// As the server reads it (server.Options.StudyDir is not set:
		// 'study new' declares absolute paths).
		if _, _, err := f.PublicFileBytes("", p.SHA256); err != nil {
			return usagef(fmt.Sprintf("put back the file the study declared (%d bytes, SHA-256 %s): every LHA checks it, and a weekly study's LHAs cannot join without it. "+
				"A newer file needs a new study (docs/deployment.md, \"Public inputs\")", p.Bytes, p.SHA256), "%s", forPeople(err.Error()))
		}
	}
	return nil
}

// helperKeyWait is how long serve waits at start for the helper's key.
const helperKeyWait = 5 * time.Second

// checkHelperKey asks the study's helper for its key before the
// coordinator starts. A helper that answers with a key other than the
// study's would refuse every round (the LHAs seal their seeds to the
// study's key), so serve does not start; a helper that does not answer
// yet only gets a warning on w: its rounds are abandoned (nothing
// released, no budget spent) until it does.
func checkHelperKey(ctx context.Context, f *study.File, w io.Writer) error {
	if f.Helper == nil {
		return nil
	}
	want, err := secagg.ParsePublicKey(f.Helper.PublicKey)
	if err != nil {
		return err // Validate has checked it
	}
	ctx, cancel := context.WithTimeout(ctx, helperKeyWait)
	defer cancel()
	got, err := (&helper.Client{URL: f.Helper.URL}).Key(ctx)
	if err != nil {
		fmt.Fprintf(w, "warning: %s. The coordinator starts anyway; each round is abandoned (nothing released, no privacy budget spent) "+
			"until the helper answers. Ask its operator to start it ('fedcast helper serve') at that address.\n", forPeople(err.Error()))
		return nil
	}
	if got.Fingerprint() != want.Fingerprint() {
		return usagef(study.HelperKeyFix(want.Fingerprint()), "%s", study.HelperKeyDiffers(f.Helper.URL, got.Fingerprint(), want.Fingerprint()))
	}
	return nil
}

// listen listens on addr (--addr); when it cannot, the error says what to
// do: stop the program on the port, or write the address as HOST:PORT.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, usagef("stop the program that uses it (another 'fedcast serve' or 'fedcast demo'?), or choose another --addr", "%v", err)
	default:
		return nil, usagef("write --addr as HOST:PORT, e.g. 127.0.0.1:8080 (0.0.0.0:8080 for every network interface)", "%v", err)
	}
}

// coordinator is one study's ledger, engine and server.
type coordinator struct {
	lock   *os.File // the state directory's lock (statelock.go)
	ledger *ledger.Ledger
	engine *study.Engine
	srv    *server.Server
	log    *slog.Logger
}

// openCoordinator opens (or resumes) the study f in state. restartGrace > 0
// overrides the study file's restart grace (server.Options.RestartGrace).
func openCoordinator(f *study.File, raw []byte, state string, seed *uint64, static http.Handler, origins []string, restartGrace time.Duration, log *slog.Logger) (*coordinator, error) {
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	lock, err := lockState(state)
	if err != nil {
		return nil, err
	}
	c, err := openLocked(f, raw, state, seed, static, origins, restartGrace, log)
	if err != nil {
		lock.Close()
		return nil, err
	}
	c.lock = lock
	return c, nil
}

// openLocked is openCoordinator once the state directory is locked.
func openLocked(f *study.File, raw []byte, state string, seed *uint64, static http.Handler, origins []string, restartGrace time.Duration, log *slog.Logger) (*coordinator, error) {
	l, err := ledger.Open(filepath.Join(state, "ledger.db"))
	if err != nil {
		return nil, err
	}
	eng, err := study.Open(f, raw, l.Store(), &study.Options{InsecureSeed: seed})
	if err != nil {
		l.Close()
		return nil, err
	}
	var hf study.HelperFunc
	if eng.Study.Helper != nil {
		hf = server.HelperForwarder(eng.Study, f.Helper.LeaderToken, state) // each round's forwarded reports survive a crash
	}
	srv, err := server.New(&server.Options{Engine: eng, Ledger: l, Static: static, Logger: log, OriginPatterns: origins,
		RestartGrace: restartGrace, Helper: hf})
	if err != nil {
		l.Close()
		return nil, err
	}
	if eng.Rounds() > 0 {
		log.Info("resuming study", "name", f.Name, "rounds_committed", eng.Rounds(), "epsilon_spent", eng.EpsilonSpent(), "finished", eng.Finished(),
			"study_id", eng.Study.ID(), "quorum", f.Quorum(), "restart_grace", cmp.Or(restartGrace, f.ResumeWait()))
	} else {
		log.Info("study ready", "name", f.Name, "N", len(f.LHAs), "m", f.ExpectedClients, "q", f.SampleRate(),
			"T", f.Rounds, "epsilon", f.Epsilon, "delta", f.Delta, "noise_multiplier", eng.Config.NoiseMultiplier,
			"study_id", eng.Study.ID())
	}
	return &coordinator{ledger: l, engine: eng, srv: srv, log: log}, nil
}

func (c *coordinator) close() {
	c.srv.Close()
	c.ledger.Close()
	c.lock.Close()
}

// serve answers HTTP on ln and runs the rounds until ctx ends (or, with
// untilFinished, until the study has finished). It shuts down gracefully.
func (c *coordinator) serve(ctx context.Context, ln net.Listener, untilFinished bool) error {
	hs := &http.Server{Handler: c.srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	err := c.srv.Run(ctx)
	if err == nil && !untilFinished {
		select { // finished: keep answering status and exports until stopped
		case <-ctx.Done():
		case err = <-served:
		}
	}
	c.srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	c.log.Info("coordinator stopped", "rounds_committed", c.engine.Rounds())
	return err
}

// printLinksHint says where the join and admin links are: the links file
// study new wrote, or, without one, that they were printed once.
func printLinksHint(w io.Writer, f *study.File, base string) {
	if f.LinksFile != "" {
		if _, err := os.Stat(f.LinksFile); err == nil {
			fmt.Fprintf(w, "  join and admin links: %s (a secret; written by study new)\n", f.LinksFile)
			return
		}
		fmt.Fprintf(w, "  join and admin links: not found at %s (study new wrote them there, and printed them once)\n", f.LinksFile)
		return
	}
	fmt.Fprintf(w, "  join and admin links: printed once by study new (no copy was kept; next time use study new --links FILE)\n")
	fmt.Fprintf(w, "  dashboard:     %s/admin#<the admin token study new printed>\n", base)
}
