package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestClientInsecureSeedAck: against a coordinator run with --insecure-seed,
// `fedcast client` refuses to take part (exit 2, naming the flag to add)
// unless --i-understand-insecure-seed is given, and then goes on with a
// warning.
func TestClientInsecureSeedAck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, addr := t.TempDir(), freeAddr(t)
	studyPath, out, cases := clientStudy(t, dir, addr, 2, 60)
	link := regexp.MustCompile(`http://\S+/join#\S+`).FindString(out)
	if link == "" {
		t.Fatalf("no join link in:\n%s", out)
	}
	// serve's first start pretrains the initial model (about 8 s on a
	// busy machine; once per process).
	startServe(t, ctx, studyPath, dir, addr, "--insecure-seed", "7")

	code, _, errs := fedcast(t, "client", "--join", link, "--data", cases, "--quiet")
	if code != 2 || !strings.Contains(errs, "--i-understand-insecure-seed") || !strings.Contains(errs, "NO privacy protection") {
		t.Errorf("client without the acknowledgement: exit %d, %q; want refused naming --i-understand-insecure-seed", code, errs)
	}

	// With the flag it joins and waits for rounds; stop it once joined.
	errb := &syncBuffer{}
	cctx, cstop := context.WithCancel(ctx)
	cenv := &Env{Stdout: io.Discard, Stderr: errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- run(cctx, cenv, []string{"client", "--join", link, "--data", cases, "--quiet", "--i-understand-insecure-seed"})
	}()
	for !strings.Contains(errb.String(), "WARNING") {
		select {
		case c := <-done:
			t.Fatalf("client with the acknowledgement ended (exit %d):\n%s", c, errb.String())
		case <-ctx.Done():
			t.Fatalf("client with the acknowledgement did not go on:\n%s", errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cstop()
	<-done
	if s := errb.String(); !strings.Contains(s, "taking part because --i-understand-insecure-seed was given") || strings.Contains(s, "refusing") {
		t.Errorf("client with the acknowledgement: %q", s)
	}
}
