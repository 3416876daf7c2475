package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/secagg"
)

// serve refuses, before it listens, a study file that is not the one its
// state directory was started with, and a declared public input whose
// file changed or is gone. It said "ledger does not match the the stored
// study belongs to another study file" without a hint, and it started
// with a changed public file, answering each LHA's download with an error
// only its log explained.
func TestServeRefusesWrongFiles(t *testing.T) {
	dir := t.TempDir()
	a, b, state := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "a.state")
	totals := filepath.Join(dir, "totals.csv")
	body := "kind,name,state,population,date,cases\ntotal,national,,,2026-11-20,1200\n"
	if err := os.WriteFile(totals, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{a, b} {
		if code, _, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--public", totals, "--public-source", "RKI", "--out", out); code != 0 {
			t.Fatalf("study new: exit %d: %s", code, stderr)
		}
	}
	startOnce(t, a, state)

	cases := []struct {
		name    string
		prepare func()
		args    []string
		want    []string
	}{
		{"another study's file", func() {}, []string{"--study", b, "--state", state},
			[]string{"fedcast serve: the state directory " + state + " is not " + b + "'s: the stored study belongs to another study file (sha256 ",
				"hint: a state directory belongs to the study file it was started with, for good: give that file, or a new study its own --state DIR"}},
		{"the public file changed", func() { os.WriteFile(totals, []byte(body+"total,national,,,2026-11-21,1300\n"), 0o600) }, []string{"--study", a},
			[]string{"fedcast serve: " + totals + " changed since the study file declared it",
				"hint: put back the file the study declared (", "A newer file needs a new study"}},
		{"no such study file", func() {}, []string{"--study", filepath.Join(dir, "nope.json")},
			[]string{"fedcast serve: open " + filepath.Join(dir, "nope.json") + ": no such file or directory",
				"hint: --study is the study file that 'fedcast study new --out FILE' wrote: check the path, or create the study first"}},
		{"the public file is gone", func() { os.Remove(totals) }, []string{"--study", a},
			[]string{`fedcast serve: public input "totals": open ` + totals, "hint: put back the file the study declared ("}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare()
			code, _, stderr := fedcast(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "the the") {
				t.Errorf("stderr: %s", stderr)
			}
		})
	}
}

// serve asks the study's helper for its key before it starts: a helper
// with another key (it would refuse every round) stops serve with both
// fingerprints and what to do; a helper that does not answer yet gets a
// warning, and serve starts; the study's own helper passes silently.
func TestServeChecksHelperKey(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if code, _, errs := fedcast(t, "helper", "keygen", "--out", keys); code != 0 {
		t.Fatal(errs)
	}
	other, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := helper.New(other, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	running := httptest.NewServer(h.Handler())
	defer running.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	var path string // the last study file newStudy wrote
	newStudy := func(url string) *study.File {
		out := filepath.Join(t.TempDir(), "study.json")
		path = out
		if code, _, errs := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--helper", url,
			"--helper-key", filepath.Join(keys, "helper.pub"), "--out", out); code != 0 {
			t.Fatalf("study new: %s", errs)
		}
		f, _, err := study.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	want, _ := secagg.ParsePublicKey(newStudy(running.URL).Helper.PublicKey)

	newStudy(running.URL)
	code, _, stderr := fedcast(t, "serve", "--study", path, "--addr", "127.0.0.1:0")
	for _, w := range []string{"fedcast serve: the helper at " + running.URL + " has the key " + other.PublicKey().Fingerprint(),
		"but the study file names the key " + want.Fingerprint(), "this helper refuses every round",
		"hint: start the helper with the key the study names"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("another key: stderr lacks %q:\n%s", w, stderr)
		}
	}
	if code != 2 {
		t.Errorf("another key: exit %d, want 2", code)
	}

	var warn strings.Builder
	if err := checkHelperKey(context.Background(), newStudy(down.URL), &warn); err != nil {
		t.Errorf("a helper that is down stops serve: %v", err)
	}
	if w := warn.String(); !strings.HasPrefix(w, "warning: the helper at "+down.URL+" cannot be reached") || !strings.Contains(w, "each round is abandoned") {
		t.Errorf("a helper that is down: %q", w)
	}

	key, err := loadHelperKey(filepath.Join(keys, "helper.key"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := helper.New(key, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	ok := httptest.NewServer(own.Handler())
	defer ok.Close()
	warn.Reset()
	if err := checkHelperKey(context.Background(), newStudy(ok.URL), &warn); err != nil || warn.Len() > 0 {
		t.Errorf("the study's own helper: %v, %q", err, warn.String())
	}
}

// startOnce opens the coordinator of the study file path on state and
// closes it, as a served study's state directory is left.
func startOnce(t *testing.T, path, state string) {
	t.Helper()
	f, raw, err := study.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openCoordinator(f, raw, state, nil, nil, nil, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.close()
}
