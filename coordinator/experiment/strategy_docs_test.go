package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// TestStrategiesDocsMatchJSON checks that every MAE in the results table of
// docs/strategies.md is the one in the committed JSON it names, and that
// the runs are what the page says (400 counties, temporal, ≥ 5 runs).
func TestStrategiesDocsMatchJSON(t *testing.T) {
	root := testkit.RepoRoot()
	doc, err := os.ReadFile(filepath.Join(root, "docs/strategies.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, period := range []string{"nov2020", "mar2022"} {
		for _, tag := range []string{"constant", "linear0.5", "linear2", "cyclic"} {
			f := filepath.Join(root, "docs/results/strategies", period+"_"+tag+".json")
			r, err := ReadReport(f)
			if err != nil {
				t.Fatal(err)
			}
			if r.Setting.Areas != 400 || r.Setting.Split != "temporal" || r.Setting.Runs < 5 {
				t.Errorf("%s: %d areas, split %s, %d runs", f, r.Setting.Areas, r.Setting.Split, r.Setting.Runs)
			}
			for _, res := range r.Results {
				m := res.Metrics.MAE
				cell := fmt.Sprintf("| %.2f ± %.2f |", m.Mean, m.SD)
				if m.Mean > 1000 {
					cell = fmt.Sprintf("| %.0f ± %.0f |", m.Mean, m.SD)
				}
				if !strings.Contains(string(doc), cell) {
					t.Errorf("%s ε=%v: MAE %s is not in docs/strategies.md", f, float64(res.Epsilon), cell)
				}
			}
		}
	}
}
