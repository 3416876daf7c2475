package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
)

// TestStudyNewLipschitz: --preset lipschitz writes a study of the
// Lipschitz features over trailing weekly windows, and refuses flags that
// would break the windows or the spectral bound of its released models.
func TestStudyNewLipschitz(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--preset", "lipschitz", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Design lipschitz: model [15 8 1]") || strings.Contains(stdout, "Planner") {
		t.Errorf("output does not name the design, or plans with a table not measured for it:\n%s", stdout)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	f, err := study.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if f.Features != "lipschitz" || f.Smoothing != "trailing" || f.History != 15 || f.Horizon != 7 || f.Damping != 0.1 {
		t.Errorf("study file: features %q smoothing %q H %d P %d damping %v", f.Features, f.Smoothing, f.History, f.Horizon, f.Damping)
	}
	for i, bad := range [][]string{{"--smoothing", "centered"}, {"--horizon", "14"}, {"--history", "10"},
		{"--strategy", "mrmtl", "--lambda", "1"}, {"--strategy", "cyclic"}, {"--privacy", "both", "--example-epsilon", "1"}} {
		args := append([]string{"study", "new", "--lhas", "3", "--epsilon", "2", "--preset", "lipschitz", "--out", filepath.Join(dir, "bad"+string(rune('a'+i))+".json")}, bad...)
		if code, _, stderr := fedcast(t, args...); code != 2 || !strings.Contains(stderr, "--preset lipschitz") {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
	if code, _, stderr := fedcast(t, "simulate", "--preset", "lipschitz", "--epsilon", "1", "--runs", "1"); code != 2 || !strings.Contains(stderr, "backtest --preset lipschitz") {
		t.Errorf("simulate --preset lipschitz: exit %d, %q", code, stderr)
	}
}
