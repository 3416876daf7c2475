package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
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

// loadHelperKey reads a helper.key file.
func loadHelperKey(path string) (*secagg.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	return secagg.ParsePrivateFile(path, b)
}

func runHelperServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "helper serve", "helper serve --key FILE --state DIR [--addr HOST:PORT]")
	keyPath := fs.String("key", "", "the helper.key file written by 'fedcast helper keygen'; required")
	state := fs.String("state", "", "directory of the helper's ledgers (one per study); required")
	addr := fs.String("addr", "localhost:8090", "listen address")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *keyPath == "" || *state == "" {
		return usagef("e.g. fedcast helper serve --key helper-keys/helper.key --state helper.state", "--key and --state are required")
	}
	k, err := loadHelperKey(*keyPath)
	if err != nil {
		return err
	}
	opt := &helper.Options{}
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
	h, err := helper.New(k, *state, opt)
	if err != nil {
		return err
	}
	defer h.Close()
	ln, err := listen(*addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "fedcast helper on http://%s (state %s)\n", ln.Addr(), *state)
	fmt.Fprintf(env.Stdout, "helper key fingerprint: %s\n", k.PublicKey().Fingerprint())
	return serveHelper(ctx, h, ln)
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
