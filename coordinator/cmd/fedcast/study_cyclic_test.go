package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
)

// study new --strategy cyclic writes a cyclic study with m = N that
// loads; with --privacy example it needs no --epsilon; --expected below N
// is refused with the field named; --strategy fedavg writes no strategy.
func TestStudyNewCyclic(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--epsilon", "2", "--strategy", "cyclic"}, []string{`"strategy": "cyclic"`, `"expected_clients": 4`}},
		{[]string{"--strategy", "cyclic", "--privacy", "example", "--example-epsilon", "3"}, []string{`"privacy": "example"`, `"example_epsilon": 3`}},
		{[]string{"--epsilon", "2", "--strategy", "cyclic", "--privacy", "both", "--example-epsilon", "3"}, []string{`"privacy": "both"`}},
	} {
		out := filepath.Join(dir, strings.Join(tc.args, "_")+".json")
		code, stdout, errs := fedcast(t, append([]string{"study", "new", "--lhas", "4", "--rounds", "3", "--out", out}, tc.args...)...)
		if code != 0 || !strings.Contains(stdout, "12 turns") {
			t.Fatalf("%v: exit %d: %s%s", tc.args, code, stdout, errs)
		}
		b, _ := os.ReadFile(out)
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%v: study file lacks %s:\n%s", tc.args, w, b)
			}
		}
		if _, err := study.Parse(b); err != nil {
			t.Errorf("%v: the written file does not load: %v", tc.args, err)
		}
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "4", "--epsilon", "2", "--strategy", "cyclic", "--expected", "2", "--out", filepath.Join(dir, "x.json")); code == 0 || !strings.Contains(errs, "expected_clients") {
		t.Errorf("cyclic with --expected 2: exit %d %q", code, errs)
	}
	out := filepath.Join(dir, "fedavg.json")
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "4", "--epsilon", "2", "--strategy", "fedavg", "--out", out); code != 0 {
		t.Fatal(errs)
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), `"strategy"`) {
		t.Errorf("--strategy fedavg wrote a strategy field:\n%s", b)
	}
}
