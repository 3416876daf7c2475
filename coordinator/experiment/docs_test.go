package experiment

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// resultFiles are the committed outputs of the paper experiments
// (docs/results.md), in the order docs/results/tables.md lists them.
var resultFiles = []string{
	"docs/results/nov2020_random.json",
	"docs/results/nov2020_temporal.json",
	"docs/results/mar2022_random.json",
	"docs/results/mar2022_temporal.json",
}

// TestResultsDocsUpToDate checks that docs/results/tables.md is exactly
// what `fedcast report` makes of the committed JSON results, so the numbers
// in the docs are the numbers the runs produced. Regenerate with
//
//	bin/fedcast report docs/results/nov2020_random.json docs/results/nov2020_temporal.json \
//	    docs/results/mar2022_random.json docs/results/mar2022_temporal.json > docs/results/tables.md
func TestResultsDocsUpToDate(t *testing.T) {
	root := testkit.RepoRoot()
	var reps []*Report
	for _, f := range resultFiles {
		r, err := ReadReport(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if r.Setting.Areas != 400 || len(r.Results) == 0 {
			t.Errorf("%s: %d areas, %d results: not a paper run", f, r.Setting.Areas, len(r.Results))
		}
		reps = append(reps, r)
	}
	var want bytes.Buffer
	if err := WriteMarkdown(&want, resultFiles, reps); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs/results/tables.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("docs/results/tables.md is not what `fedcast report` makes of %v; regenerate it (see the test's doc comment)", resultFiles)
	}
}

// beyondFiles are the committed outputs behind docs/results.md, "Beyond
// the paper", in the order docs/results/beyond.md lists them: per study
// window and split, the paper's runs, the second round's default (the
// paper's 10 input days, learning rate 0.01), the third round's (13 input
// days, learning rate 0.01), then the default design's (the fourth round:
// learning rate 0.001).
var beyondFiles = []string{
	"docs/results/nov2020_temporal.json",
	"docs/results/beyond/nov2020_temporal_paper_eps0.5.json",
	"docs/results/beyond/nov2020_temporal_default_h10.json",
	"docs/results/beyond/nov2020_temporal_default_r3.json",
	"docs/results/beyond/nov2020_temporal_default.json",
	"docs/results/nov2020_random.json",
	"docs/results/beyond/nov2020_random_default_h10.json",
	"docs/results/beyond/nov2020_random_default_r3.json",
	"docs/results/beyond/nov2020_random_default.json",
	"docs/results/mar2022_temporal.json",
	"docs/results/beyond/mar2022_temporal_paper_eps0.5.json",
	"docs/results/beyond/mar2022_temporal_default_h10.json",
	"docs/results/beyond/mar2022_temporal_default_r3.json",
	"docs/results/beyond/mar2022_temporal_default.json",
	"docs/results/mar2022_random.json",
	"docs/results/beyond/mar2022_random_default_h10.json",
	"docs/results/beyond/mar2022_random_default_r3.json",
	"docs/results/beyond/mar2022_random_default.json",
}

// TestBeyondDocsUpToDate checks docs/results/beyond.md against the JSON
// files like TestResultsDocsUpToDate. Regenerate with
//
//	bin/fedcast report --compare --epsilon 0.5,1,2,inf <beyondFiles…> > docs/results/beyond.md
func TestBeyondDocsUpToDate(t *testing.T) {
	root := testkit.RepoRoot()
	var reps []*Report
	for _, f := range beyondFiles {
		r, err := ReadReport(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, r)
	}
	var want bytes.Buffer
	if err := WriteComparison(&want, beyondFiles, reps, []float64{0.5, 1, 2, math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs/results/beyond.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("docs/results/beyond.md is not what `fedcast report --compare` makes of %v; regenerate it (see the test's doc comment)", beyondFiles)
	}
}
