package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// A mistyped flag gets two lines, the mistake and a hint naming the flag
// meant, not the whole list of flags; -h still prints the list on stderr.
func TestFlagMistakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string // "": no suggestion
	}{
		{[]string{"plan", "--lhas", "40", "--epslion", "2"}, "did you mean --epsilon?"},
		{[]string{"study", "new", "--lhas", "3", "--epsilon", "2", "--round", "3", "--out", "x.json"}, "did you mean --rounds?"},
		{[]string{"backtest", "--hbu", "dir"}, "did you mean --hub?"},
		{[]string{"data", "check", "--jsno", "cases.csv"}, "did you mean --json?"},
		{[]string{"serve", "--stduy", "study.json"}, "did you mean --study?"},
		{[]string{"study", "new", "--zzz", "3"}, ""},
		{[]string{"plan", "--x", "3"}, ""},
	} {
		code, _, errs := fedcast(t, c.args...)
		name := strings.Join(c.args[:len(c.args)-2], " ")
		if code != 2 || !strings.Contains(errs, "flag provided but not defined") || strings.Contains(errs, "Usage:") {
			t.Errorf("%s: exit %d, stderr %q; want 2, the mistake and no list of flags", name, code, errs)
		}
		if c.hint != "" && !strings.Contains(errs, c.hint) || c.hint == "" && strings.Contains(errs, "did you mean") {
			t.Errorf("%s: stderr %q, want hint %q", name, errs, c.hint)
		}
		if n := strings.Count(strings.TrimSpace(errs), "\n") + 1; n != 2 {
			t.Errorf("%s: %d lines on stderr, want 2: %q", name, n, errs)
		}
	}
	for _, args := range [][]string{{"plan", "-h"}, {"data", "check", "-h"}, {"study", "new", "--help"}} {
		if code, _, errs := fedcast(t, args...); code != 0 || !strings.Contains(errs, "Usage: fedcast") || !strings.Contains(errs, "-json") && !strings.Contains(errs, "-epsilon") {
			t.Errorf("%v: exit %d, stderr %q; want the usage", args, code, errs)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"epsilon", "epsilon", 0}, {"epslion", "epsilon", 1}, {"round", "rounds", 1}, {"jsno", "json", 1}, {"hbu", "hub", 1}, {"abc", "", 3}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// serve on an address in use, or on one without a port, says what to do.
func TestServeAddressMistakes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out := filepath.Join(t.TempDir(), "s.json")
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--out", out); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct{ addr, want string }{
		{busy.Addr().String(), "another 'fedcast serve'"},
		{"localhost", "write --addr as HOST:PORT"},
	} {
		code, _, errs := fedcast(t, "serve", "--study", out, "--addr", c.addr)
		if code != 2 || !strings.Contains(errs, c.addr) || !strings.Contains(errs, c.want) {
			t.Errorf("--addr %s: exit %d, stderr %q; want 2 and %q", c.addr, code, errs, c.want)
		}
	}
}
