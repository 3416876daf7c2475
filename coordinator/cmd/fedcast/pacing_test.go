package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/web"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
)

// syncBuffer is a buffer safe for the demo's writes and the test's reads.
type syncBuffer = testkit.SyncBuffer

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func publicStatus(t *testing.T, base string) protocol.Status {
	t.Helper()
	resp, err := http.Get(base + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st protocol.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDemoPacing: a demo study holds its rounds until the browser seat has
// connected and had --seat-time, or until the admin's start; the start
// needs the admin token.
func TestDemoPacing(t *testing.T) {
	state := t.TempDir()
	for _, how := range []string{"start", "seat"} {
		out := &syncBuffer{}
		env := &Env{Stdout: out, Stderr: io.Discard, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, env, []string{"demo", "--addr", "127.0.0.1:0", "--state", state, "--campaigns", "1", "--lhas", "2", "--expected", "2",
				"--rounds", "2", "--epsilon", "2", "--round-length", "1s", "--once", "--seat-time", "300ms", "--log-level", "error"})
		}()
		waitFor(t, "the demo to wait for the seat", 30*time.Second, func() bool { return strings.Contains(out.String(), "waiting for you") })
		m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no address in:\n%s", out)
		}
		base := m[1]
		time.Sleep(700 * time.Millisecond)
		if st := publicStatus(t, base); st.Round != 0 || st.State != protocol.StateWaiting {
			t.Fatalf("%s: the study did not wait: %+v", how, st)
		}
		var sec demoSecrets
		b, _ := os.ReadFile(filepath.Join(state, "secrets.json"))
		if err := json.Unmarshal(b, &sec); err != nil {
			t.Fatal(err)
		}
		if demoStartPath != ui.DemoStartPath {
			t.Fatalf("the demo takes its start at %s, the dashboard posts to %s", demoStartPath, ui.DemoStartPath)
		}
		get := func(token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, base+demoStartPath, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, strings.TrimSpace(string(b))
		}
		if code, body := get(sec.Admin); code != 200 || body != `{"waiting":true}` {
			t.Errorf("%s: the dashboard's question got %d %s", how, code, body)
		}
		if code, _ := get("wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s: a wrong token asked and got %d", how, code)
		}
		switch how {
		case "start":
			for _, tc := range []struct {
				token string
				code  int
			}{{"wrong", http.StatusUnauthorized}, {sec.Admin, http.StatusNoContent}} {
				req, _ := http.NewRequest(http.MethodPost, base+demoStartPath, nil)
				req.Header.Set("Authorization", "Bearer "+tc.token)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.code {
					t.Errorf("start with token %q: %d, want %d", tc.token, resp.StatusCode, tc.code)
				}
			}
		case "seat":
			s, err := lhaconn.Join(ctx, base+"/join#"+sec.Seat, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			waitFor(t, "the seat to be seen", 10*time.Second, func() bool { return strings.Contains(out.String(), "your seat is connected") })
		}
		select {
		case code := <-done:
			if code != 0 || !strings.Contains(out.String(), "demo study finished: 2 rounds") {
				t.Errorf("%s: exit %d:\n%s", how, code, out)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the demo did not finish:\n%s", how, out)
		}
		cancel()
	}
}

// TestWebHandlerFromAnyDir: without --web, the command serves the app
// built into it, whatever the working directory; a binary built without
// the app (as in this test) serves the placeholder with 503 and says so at
// start-up, and --web DIR overrides.
func TestWebHandlerFromAnyDir(t *testing.T) {
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	h := webHandler("", &out)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/join", nil))
	if web.IsPlaceholder(embeddedApp()) {
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "make build") || !strings.Contains(out.String(), "no browser app built in") {
			t.Errorf("placeholder: %d %q; start-up said %q", rec.Code, rec.Body.String(), out.String())
		}
	} else if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "wasm_exec.js") {
		t.Errorf("embedded app: %d", rec.Code)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><title>my app</title>"), 0o644)
	rec = httptest.NewRecorder()
	webHandler(dir, &out).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/join", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "my app") {
		t.Errorf("--web: %d %q", rec.Code, rec.Body.String())
	}
}
