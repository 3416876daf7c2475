package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
)

func TestStudyNew(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := fedcast(t, "study", "new", "--names", "Kreis A, Kreis B,Kreis C", "--epsilon", "2", "--rounds", "20", "--expected", "2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, raw, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.LHAs) != 3 || f.LHAs[1].Name != "Kreis B" {
		t.Fatalf("LHAs %+v", f.LHAs)
	}
	tokens := study.NewTokens(f)
	var links int
	for _, line := range strings.Split(stdout, "\n") {
		if i := strings.Index(line, "/join#"); i >= 0 {
			links++
			tok := line[i+len("/join#"):]
			if strings.Contains(string(raw), tok) {
				t.Error("the study file contains a join token")
			}
			if tokens.LHA(tok) < 0 {
				t.Errorf("printed token %q is not enrolled", tok)
			}
		}
	}
	if links != 3 || !strings.Contains(stdout, "/admin#") {
		t.Errorf("printed %d join links:\n%s", links, stdout)
	}
	if code, _, _ := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--rounds", "20", "--expected", "2", "--out", out); code != 2 {
		t.Errorf("overwriting a study file: exit %d, want 2", code)
	}
	if code, _, _ := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--rounds", "20", "--expected", "3", "--out", out+"2"); code == 0 {
		t.Error("m > N accepted")
	}
}

// TestDemoOnceAndLedgerExport runs a tiny demo study to the end, exports
// its ledger, and checks that a second demo on the same state starts a
// fresh study.
func TestDemoOnceAndLedgerExport(t *testing.T) {
	state := t.TempDir()
	args := []string{"demo", "--addr", "127.0.0.1:0", "--state", state, "--campaigns", "1", "--lhas", "4", "--expected", "2",
		"--rounds", "3", "--epsilon", "2", "--round-length", "1s", "--once", "--start", "now", "--log-level", "error"}
	code, stdout, stderr := fedcast(t, args...)
	if code != 0 || !strings.Contains(stdout, "demo study finished: 3 rounds") {
		t.Fatalf("demo exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "/join#") || !strings.Contains(stdout, "/admin#") {
		t.Errorf("demo did not print the seat and admin links:\n%s", stdout)
	}
	// It states the study it runs, not the flags' unset values.
	if !strings.Contains(stdout, "4 simulated LHAs + your seat; 2 expected per round, 3 rounds, ε=2; rounds start every 1s") {
		t.Errorf("demo did not state its study:\n%s", stdout)
	}
	// The demo runs fedcast's default design.
	sf, _ := os.ReadFile(filepath.Join(state, "study-1", "study.json"))
	for _, want := range []string{`"features": "log-change"`, `"damping": 0.5`, `"learning_rate": 0.001`, `"hidden": [
    16
  ]`} {
		if !strings.Contains(string(sf), want) {
			t.Errorf("demo study file lacks %s:\n%s", want, sf)
		}
	}
	out := filepath.Join(t.TempDir(), "ledger.json")
	model := filepath.Join(t.TempDir(), "model.json")
	if code, _, stderr := fedcast(t, "ledger", "export", "--state", filepath.Join(state, "study-1"), "--out", out, "--model", model); code != 0 {
		t.Fatalf("ledger export: %s", stderr)
	}
	b, _ := os.ReadFile(out)
	var e ledger.Export
	if err := json.Unmarshal(b, &e); err != nil || len(e.Rounds) != 3 || e.Finished == nil || e.Rounds[2].Epsilon > 2 {
		t.Fatalf("export %s (%v)", b, err)
	}
	// The demo runs the two-server flow: a helper in process, its own
	// ledger of the same rounds, both ε in the leader's export.
	if !strings.Contains(stdout, "helper (the second server of secure aggregation) at http://") {
		t.Errorf("demo did not start its helper:\n%s", stdout)
	}
	for _, r := range e.Rounds {
		if !r.SecureAggregation || r.EpsilonPublic == nil || !(*r.EpsilonPublic < r.Epsilon) {
			t.Errorf("leader ledger round %d: secure %v, public ε %v, ε %v", r.Round, r.SecureAggregation, r.EpsilonPublic, r.Epsilon)
		}
	}
	code, hout, stderr := fedcast(t, "ledger", "export", "--state", filepath.Join(state, "helper", "state"))
	var he struct {
		Rounds []struct {
			Epsilon float64 `json:"epsilon"`
		} `json:"rounds"`
	}
	if code != 0 || json.Unmarshal([]byte(hout), &he) != nil || len(he.Rounds) != 3 || he.Rounds[2].Epsilon != e.Rounds[2].Epsilon {
		t.Errorf("helper ledger export (exit %d): %s %s", code, hout, stderr)
	}
	mb, _ := os.ReadFile(model)
	var m struct {
		ModelSHA256 string `json:"model_sha256"`
	}
	if err := json.Unmarshal(mb, &m); err != nil || m.ModelSHA256 != e.Rounds[2].ModelSHA256 {
		t.Errorf("final model hash %q, ledger %q", m.ModelSHA256, e.Rounds[2].ModelSHA256)
	}
	code, stdout, _ = fedcast(t, args...)
	if code != 0 || !strings.Contains(stdout, "study-2") {
		t.Errorf("second demo did not start a fresh study:\n%s", stdout)
	}
}

// TestDemoCampaigns: the demo's continuing study (2 campaigns of 2 rounds
// here) runs to the end; the ledger export lists every round with its
// campaign and the lifetime ε within the budget. study new says the same
// schedule.
func TestDemoCampaigns(t *testing.T) {
	state := t.TempDir()
	code, stdout, stderr := fedcast(t, "demo", "--addr", "127.0.0.1:0", "--state", state, "--campaigns", "2", "--every", "3s", "--lhas", "3",
		"--rounds", "2", "--epsilon", "2", "--round-length", "1s", "--once", "--start", "now", "--log-level", "error")
	if code != 0 || !strings.Contains(stdout, "demo study finished: 4 rounds") || !strings.Contains(stdout, "a continuing study: 2 campaigns of 2 rounds, one every 3s") {
		t.Fatalf("demo exit %d\n%s\n%s", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "ledger.json")
	if code, _, stderr := fedcast(t, "ledger", "export", "--state", filepath.Join(state, "study-1"), "--out", out); code != 0 {
		t.Fatalf("ledger export: %s", stderr)
	}
	b, _ := os.ReadFile(out)
	var e ledger.Export
	if err := json.Unmarshal(b, &e); err != nil || len(e.Rounds) != 4 || e.Rounds[1].Campaign != 1 || e.Rounds[2].Campaign != 2 || e.EpsilonSpent > 2 || e.EpsilonSpent < 1.9 {
		t.Fatalf("export %s (%v)", b, err)
	}
	if !e.Rounds[2].Committed.After(e.Rounds[1].Committed.Add(1500 * time.Millisecond)) {
		t.Errorf("campaign 2 committed %v after campaign 1: no gap between campaigns", e.Rounds[2].Committed.Sub(e.Rounds[1].Committed))
	}
	s := filepath.Join(t.TempDir(), "s.json")
	if code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--campaigns", "4", "--every", "168h", "--rounds", "5", "--out", s); code != 0 ||
		!strings.Contains(stdout, "Continuing study: 4 campaigns of 5 rounds, one every 7 days") || !strings.Contains(stdout, "T=20") {
		t.Errorf("study new --campaigns: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--campaigns", "4", "--out", s+"2"); code != 2 || !strings.Contains(stderr, "--campaigns needs --every") {
		t.Errorf("--campaigns without --every: exit %d %s", code, stderr)
	}
}
