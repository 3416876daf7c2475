package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// goldenRuns are the simulate runs recorded under testdata after the
// proven-ε change (issue 22), for the restructure to check against: the
// paper preset at q = 0.5 (6 of 12 areas a round, 5 rounds; the sampled
// case, where the accountant uses integer orders only) and the default
// design as it is (q = 1, its 5 rounds), both at ε = 2 with seed 1 on a
// synthetic outbreak of 12 areas × 120 days (data synth --seed 4).
var goldenRuns = []struct {
	name string
	args []string
}{
	{"paper", []string{"--preset", "paper", "--rounds", "5", "--clients-per-round", "6"}},
	{"default", []string{"--preset", "default"}},
}

// goldenVolatile are the fields that vary from run to run or machine to
// machine (timings, the Go version, the worker count, the data file's
// path); they are dropped before comparing.
var goldenVolatile = map[string][]string{
	"config":    {"wall_seconds", "gomaxprocs", "go_version", "workers", "cases_file"},
	"results[]": {"seconds"},
}

// normaliseGolden drops the volatile fields and re-encodes the rest with
// sorted keys (numbers keep their shortest round-trip form, so equal bytes
// mean equal bits).
func normaliseGolden(t *testing.T, b []byte) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if c, ok := v["config"].(map[string]any); ok {
		for _, k := range goldenVolatile["config"] {
			delete(c, k)
		}
	}
	if rs, ok := v["results"].([]any); ok {
		for _, r := range rs {
			if m, ok := r.(map[string]any); ok {
				for _, k := range goldenVolatile["results[]"] {
					delete(m, k)
				}
			}
		}
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// TestSimulateGolden re-runs the golden simulations and compares their JSON
// with testdata/simulate_golden_*.json bit for bit (apart from the volatile
// fields). FEDCAST_UPDATE_GOLDEN=1 rewrites the files instead.
func TestSimulateGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		// Recorded on amd64; other architectures may fuse a·b + c into
		// one rounding (FMA) and so differ in the last bits.
		t.Skipf("golden simulate outputs are recorded on amd64, this is %s", runtime.GOARCH)
	}
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "12", "--days", "120", "--seed", "4", "--out", cases); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	for _, g := range goldenRuns {
		out := filepath.Join(dir, g.name+".json")
		args := append([]string{"simulate", "--cases", cases, "--epsilon", "2", "--runs", "1", "--seed", "1", "--json", out, "--quiet"}, g.args...)
		if code, _, errs := fedcast(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", g.name, code, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := normaliseGolden(t, b)
		path := filepath.Join("testdata", "simulate_golden_"+g.name+".json")
		if os.Getenv("FEDCAST_UPDATE_GOLDEN") == "1" {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (record it with FEDCAST_UPDATE_GOLDEN=1)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: simulate output differs from %s (first difference at byte %d); if the change is intended, re-record with FEDCAST_UPDATE_GOLDEN=1 and say why",
				g.name, path, firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
