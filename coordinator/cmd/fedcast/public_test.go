package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// 'study new --public FILE --public-source TEXT' declares the totals file
// (source, SHA-256, size, its path for serve) and the built-in holiday
// calendar; the public study parameters carry both without the path.
func TestStudyNewPublic(t *testing.T) {
	dir := t.TempDir()
	totals, out := filepath.Join(dir, "totals.csv"), filepath.Join(dir, "s.json")
	body := []byte("date,national\n2026-11-20,1200\n")
	if err := os.WriteFile(totals, body, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--public", totals,
		"--public-source", "national totals, RKI, 2026-11-27", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Public input totals: national totals, RKI, 2026-11-27 (30 bytes, SHA-256 ") ||
		!strings.Contains(stdout, "Public input holidays: public holidays by state from github.com/rickar/cal/v2") {
		t.Errorf("output:\n%s", stdout)
	}
	f, _, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.PublicInputs) != 2 || f.PublicInputs[0].Path != totals || f.PublicInputs[0].Check(body) != nil {
		t.Fatalf("study file public inputs %+v", f.PublicInputs)
	}
	st := f.Public(1, false)
	wire, _ := json.Marshal(st)
	if len(st.PublicInputs) != 2 || st.PublicInputs[0].Name != protocol.PublicTotals || strings.Contains(string(wire), totals) {
		t.Fatalf("public study declares %+v", st.PublicInputs)
	}
	if code, _, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--public", filepath.Join(dir, "missing.csv"),
		"--out", filepath.Join(dir, "t.json")); code == 0 || !strings.Contains(stderr, "missing.csv") {
		t.Fatalf("a missing public file: exit %d: %s", code, stderr)
	}
}
