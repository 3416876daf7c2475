package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// ledger export of a coordinator's state directory with --study (meant for
// a helper's) said "helper: no ledger of study abc in DIR" of a ledger
// that is there; it says what --study is for.
func TestLedgerExportStudyFlag(t *testing.T) {
	dir := t.TempDir()
	out, state := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.state")
	if code, _, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--out", out); code != 0 {
		t.Fatalf("study new: exit %d: %s", code, stderr)
	}
	startOnce(t, out, state)
	code, _, stderr := fedcast(t, "ledger", "export", "--state", state, "--study", "abc")
	if code != 2 || !strings.Contains(stderr, "--study picks a study in a helper's state directory; "+state+" is a coordinator's") ||
		!strings.Contains(stderr, "hint: leave out --study") {
		t.Errorf("--study with a coordinator's state: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := fedcast(t, "ledger", "export", "--state", state); code != 0 || !strings.Contains(stdout, `"format": "fedcast-ledger/1"`) {
		t.Errorf("without --study: exit %d: %s", code, stderr)
	}
}
