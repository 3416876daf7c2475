package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
)

// TestStudyTopUp: 'study topup' records a top-up in a stopped study's
// ledger, which the next serve applies (the study's ε and rounds grow);
// a budget that does not rise is refused with a clear message, and so is a
// top-up while a coordinator runs on the state directory (its lock).
func TestStudyTopUp(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.state")
	if code, _, stderr := fedcast(t, "study", "new", "--names", "Kreis A,Kreis B,Kreis C", "--epsilon", "2", "--campaigns", "3",
		"--every", "1h", "--rounds", "2", "--round-length", "1m", "--out", out); code != 0 {
		t.Fatalf("study new: exit %d: %s", code, stderr)
	}
	f, raw, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	openEngine := func() *study.Engine {
		t.Helper()
		l, err := ledger.Open(filepath.Join(state, "ledger.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		e, err := study.Open(f, raw, l.Store(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if e := openEngine(); e.Study.Epsilon != 2 || e.Study.Rounds != 6 {
		t.Fatalf("before: ε=%v, %d rounds", e.Study.Epsilon, e.Study.Rounds)
	}
	// Refused while a coordinator runs on the state directory.
	c, err := openCoordinator(f, raw, state, nil, nil, nil, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := fedcast(t, "study", "topup", "--state", state, "--epsilon", "3")
	if code == 0 || !strings.Contains(stderr, "a coordinator is running on this state directory") || !strings.Contains(stderr, "stop 'fedcast serve' first") {
		t.Errorf("a top-up while serve runs: exit %d: %s", code, stderr)
	}
	if _, err := openCoordinator(f, raw, state, nil, nil, nil, 0, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "coordinator.lock is locked") {
		t.Errorf("a second coordinator on the same state: %v", err)
	}
	c.close()
	if e := openEngine(); len(e.Study.TopUps) != 0 {
		t.Fatal("the refused top-up was recorded")
	}
	code, stdout, stderr := fedcast(t, "study", "topup", "--state", state, "--epsilon", "3", "--campaigns", "2")
	if code != 0 {
		t.Fatalf("study topup: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Top-up 1 recorded", "ε 2 → 3", "Added 2 campaigns of 2 rounds (rounds 7–10", "under an RDP privacy filter",
		"Planner: with the added rounds' noise", "warning: the added rounds: with 3 LHAs at ε = 3 the shared model is expected to be worse than no change",
		// It said only "each LHA trains in the added rounds only if its own ε limit allows", not that by default none does.
		"A page or client that joined before this top-up keeps its limit (by default the budget it joined under, at most ε = 2) and sits out the added rounds until the LHA agrees",
		"(with --max-epsilon 3 if it sets one)",
		// "relative WIS" was not explained.
		"(Relative WIS: the forecasts' error, their ranges included, as a multiple of the no-change forecast's; below 1 beats no change"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("study topup output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "weak promise") {
		t.Errorf("a top-up to ε = 3 is called weak:\n%s", stdout)
	}
	e := openEngine()
	if e.Study.Epsilon != 3 || e.Study.Rounds != 10 || e.Study.CampaignCount() != 5 || len(e.Study.TopUps) != 1 {
		t.Fatalf("after: ε=%v, %d rounds, %d campaigns, %d top-ups", e.Study.Epsilon, e.Study.Rounds, e.Study.CampaignCount(), len(e.Study.TopUps))
	}
	// A refused top-up says so once, with what the flags mean (it said
	// "fedcast study: study topup: invalid top-up: …").
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "2.5"}, "fedcast study: top-up refused: new budget ε=2.5 must be finite and above the current 3\n"},
		{[]string{"--epsilon", "NaN"}, "fedcast study: top-up refused: new budget ε=NaN must be finite and above the current 3\n"},
		{[]string{"--epsilon", "4", "--campaigns", "0"}, "fedcast study: top-up refused: 0 added campaigns (want at least 1)\n"},
	} {
		code, _, stderr = fedcast(t, append([]string{"study", "topup", "--state", state}, tc.args...)...)
		if code != 2 || !strings.HasPrefix(stderr, tc.want) || !strings.Contains(stderr, "hint: --epsilon is the new lifetime budget of the whole study, above its ε = 3 now (e.g. --epsilon 4)") {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
	}
}

// A --state that is not a state directory (the study file, a name without
// .state, a folder without a ledger) is refused by ledger export and study
// topup alike, with the directory meant; --epsilon 0 is no missing flag.
func TestStateDirMistakes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state, want, hint string
	}{
		{file, "--state " + file + " is a file", "--state " + filepath.Join(dir, "s.state")},
		{filepath.Join(dir, "s"), "no study ledger in " + filepath.Join(dir, "s"), "by default the study file's name without .json, plus .state"},
		{dir, "no study ledger in " + dir, "'fedcast serve' printed"},
	} {
		for _, args := range [][]string{{"ledger", "export", "--state", c.state}, {"study", "topup", "--state", c.state, "--epsilon", "3"}} {
			code, _, errs := fedcast(t, args...)
			if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, c.hint) {
				t.Errorf("%v: exit %d, stderr %q; want 2, %q and %q", args, code, errs, c.want, c.hint)
			}
		}
	}
	if code, _, errs := fedcast(t, "study", "topup", "--state", dir, "--epsilon", "0"); strings.Contains(errs, "required") || code == 0 {
		t.Errorf("--epsilon 0: exit %d, %q; want it judged, not called missing", code, errs)
	}
}

// A top-up past ε = 10 is recorded with the weak-promise warning.
func TestStudyTopUpWeakEpsilon(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.state")
	if code, _, stderr := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--campaigns", "2",
		"--every", "1h", "--rounds", "2", "--round-length", "1m", "--out", out); code != 0 {
		t.Fatalf("study new: exit %d: %s", code, stderr)
	}
	startOnce(t, out, state)
	code, stdout, stderr := fedcast(t, "study", "topup", "--state", state, "--epsilon", "50")
	if code != 0 || !strings.Contains(stdout, "warning: ε = 50 is a weak promise") {
		t.Errorf("exit %d: %s\n%s", code, stdout, stderr)
	}
}
