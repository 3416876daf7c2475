package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
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
	f, raw, err := study.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openCoordinator(f, raw, state, nil, nil, nil, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.close()

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
