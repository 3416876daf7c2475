package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

func init() {
	register(&command{
		Name:    "helper",
		Summary: "run the second server of secure aggregation ('helper keygen', 'helper serve')",
		Run:     runHelper,
	})
}

func runHelper(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "keygen":
			return runHelperKeygen(env, args[1:])
		case "serve":
			return runHelperServe(ctx, env, args[1:])
		}
	}
	return usagef("run 'fedcast helper keygen -h' or 'fedcast helper serve -h'", "unknown or missing subcommand (want 'helper keygen' or 'helper serve')")
}

func runHelperKeygen(env *Env, args []string) error {
	fs := newFlagSet(env, "helper keygen", "helper keygen --out DIR")
	out := fs.String("out", "", "directory for helper.key (secret, mode 0600) and helper.pub; required")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("e.g. --out helper-keys", "--out is required")
	}
	keyPath, pubPath := filepath.Join(*out, "helper.key"), filepath.Join(*out, "helper.pub")
	for _, p := range []string{keyPath, pubPath} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("helper keygen: %s already exists; it is never overwritten (a new key would make running studies fail)", p)
		}
	}
	k, err := secagg.GenerateKey()
	if err != nil {
		return err
	}
	priv, err := k.MarshalPrivate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o700); err != nil {
		return fmt.Errorf("helper keygen: %w", err)
	}
	f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("helper keygen: %w", err)
	}
	if _, err := f.Write(priv); err != nil {
		f.Close()
		return fmt.Errorf("helper keygen: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("helper keygen: %w", err)
	}
	if err := os.WriteFile(pubPath, k.PublicKey().MarshalPublic(), 0o644); err != nil {
		return fmt.Errorf("helper keygen: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s (secret: keep it on the helper's machine) and %s (give it to the coordinator)\n", keyPath, pubPath)
	fmt.Fprintf(env.Stdout, "helper key fingerprint: %s\n", k.PublicKey().Fingerprint())
	return nil
}

// keyError is a --key that cannot be read: a usage error with a hint that
// still unwraps to the file system's error.
type keyError struct {
	*usageError
	err error
}

func (e *keyError) Unwrap() []error { return []error{e.usageError, e.err} }

// keyHint says what --key must be.
const keyHint = "--key is the helper.key file that 'fedcast helper keygen --out DIR' wrote (DIR/helper.key), " +
	"not helper.pub and not a study file"

// loadHelperKey reads a helper.key file. Its errors name the file and say
// what it should be.
func loadHelperKey(path string) (*secagg.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		// Still errors.Is(err, os.ErrNotExist): the demo makes its key then.
		return nil, &keyError{usagef(keyHint, "cannot read the helper's key: %v", err).(*usageError), err}
	}
	k, err := secagg.ParsePrivateFile(path, b)
	if err != nil {
		return nil, usagef(keyHint, "%s is not a helper key: %s", path, forPeople(strings.TrimPrefix(err.Error(), path+": ")))
	}
	return k, nil
}

// parseMaxEpsilon reads --max-epsilon: a budget above 0, or "inf" for no
// limit (helper.Options.MaxEpsilon 0).
func parseMaxEpsilon(v string) (float64, error) {
	if strings.EqualFold(strings.TrimSpace(v), "inf") {
		return 0, nil
	}
	m, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(m > 0) || math.IsInf(m, 0) {
		return 0, usagef("write a number above 0, such as 10, or 'inf' to serve a study of any budget", "--max-epsilon %q is not a budget", v)
	}
	return m, nil
}

func runHelperServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "helper serve", "helper serve --key FILE --state DIR [--addr HOST:PORT] [--allow-leader SHA256,…] [--max-epsilon E]")
	keyPath := fs.String("key", "", "the helper.key file written by 'fedcast helper keygen'; required")
	state := fs.String("state", "", "directory of the helper's ledgers (one per study); required")
	addr := fs.String("addr", "localhost:8090", "listen address")
	allow := fs.String("allow-leader", "", "serve only the studies of these coordinators: their leader tokens' SHA-256, comma-separated, as 'fedcast study new --helper' prints it (default: any study that names this helper's key)")
	maxEps := fs.String("max-epsilon", strconv.Itoa(weakEpsilonAbove), "serve only studies whose lifetime budget ε is at most this ('inf': any)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	maxEpsilon, err := parseMaxEpsilon(*maxEps)
	if err != nil {
		return err
	}
	if *keyPath == "" || *state == "" {
		return usagef("e.g. fedcast helper serve --key helper-keys/helper.key --state helper.state", "--key and --state are required")
	}
	k, err := loadHelperKey(*keyPath)
	if err != nil {
		return err
	}
	opt := &helper.Options{MaxEpsilon: maxEpsilon}
	for _, a := range strings.Split(*allow, ",") {
		if a = strings.TrimSpace(a); a != "" {
			opt.AllowLeaders = append(opt.AllowLeaders, a)
		}
	}
	if v := env.Getenv(helperPauseEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("helper: %s=%q is not a duration", helperPauseEnv, v)
		}
		fmt.Fprintf(env.Stderr, "TEST HOOK enabled: the helper pauses %v between commit and answer (%s)\n", d, helperPauseEnv)
		opt.AfterCommit = func(round int) {
			fmt.Fprintf(env.Stderr, "TEST HOOK: helper paused after committing round %d\n", round)
			time.Sleep(d)
		}
	}
	log, err := newLogger(env.Stderr, "info")
	if err != nil {
		return err
	}
	opt.Log = log
	h, err := helper.New(k, *state, opt)
	if errors.Is(err, helper.ErrAllowLeader) {
		return usagef("copy the line 'fedcast study new --helper' printed for the helper's operator", "--allow-leader: %s", strings.TrimPrefix(err.Error(), helper.ErrAllowLeader.Error()+": "))
	}
	if err != nil {
		return usagef("choose another --state directory, or make this one writable (and check the disk has space)", "%s",
			strings.TrimPrefix(err.Error(), "helper: "))
	}
	defer h.Close()
	ln, err := net.Listen("tcp", *addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return usagef("stop the program that uses it (another 'fedcast helper serve'?), or choose another --addr", "%v", err)
	case err != nil:
		return usagef("write --addr as HOST:PORT, e.g. 127.0.0.1:8090 (0.0.0.0:8090 for every network interface)", "%v", err)
	}
	fmt.Fprintf(env.Stdout, "fedcast helper on http://%s (state %s)\n", ln.Addr(), *state)
	fmt.Fprintf(env.Stdout, "helper key fingerprint: %s\n", k.PublicKey().Fingerprint())
	printHelperLedgers(env, *state)
	if n := len(opt.AllowLeaders); n > 0 {
		fmt.Fprintf(env.Stdout, "serving only the studies of %s (--allow-leader); any other study is refused before a ledger is opened\n", plural(n, "coordinator"))
	} else {
		fmt.Fprintln(env.Stdout, "serving any study that names this helper's key and carries its own leader token; --allow-leader limits that to your coordinators")
	}
	if maxEpsilon > 0 {
		fmt.Fprintf(env.Stdout, "serving only studies with a lifetime budget up to ε = %g (--max-epsilon)\n", maxEpsilon)
	}
	fmt.Fprintf(env.Stdout, "each request is logged below: a round served, or a request refused and why\n")
	err = serveHelper(ctx, h, ln)
	log.Info("helper stopped", "state", *state)
	return err
}

// printHelperLedgers says which studies the state directory already holds
// a ledger for, and how far each is: after a restart, the operator sees
// that nothing was lost.
func printHelperLedgers(env *Env, state string) {
	hs, err := helper.Studies(state)
	if err != nil || len(hs) == 0 {
		fmt.Fprintf(env.Stdout, "no study ledger yet in %s: the first round a coordinator asks for starts one\n", state)
		return
	}
	fmt.Fprintf(env.Stdout, "%d study ledger(s) in %s (fedcast ledger export --state %s [--study HASH]):\n", len(hs), state, state)
	for _, hx := range hs {
		e, err := helper.ExportLedger(state, hx)
		if err != nil {
			fmt.Fprintf(env.Stdout, "  study %s: cannot be read: %s\n", hx, strings.TrimPrefix(err.Error(), "helper: "))
			continue
		}
		var st protocol.Study
		json.Unmarshal(e.Study, &st)
		who := ""
		if st.Helper != nil && st.Helper.LeaderOperator != "" {
			who = ", coordinator " + st.Helper.LeaderOperator
		}
		fmt.Fprintf(env.Stdout, "  study %s %q%s: %d of %d rounds served, ε = %.4g of %g spent\n",
			hx, st.Name, who, len(e.Rounds), st.Rounds, e.EpsilonSpent, st.Epsilon)
	}
}

// helperPauseEnv, holding a Go duration, makes `helper serve` pause
// between committing a round's share and answering it (crash tests only).
const helperPauseEnv = "FEDCAST_TEST_HELPER_PAUSE_AFTER_COMMIT"

// serveHelper answers the helper API on ln until ctx ends.
func serveHelper(ctx context.Context, h *helper.Helper, ln net.Listener) error {
	hs := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
