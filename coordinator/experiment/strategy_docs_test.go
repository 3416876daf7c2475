package experiment

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/fl"
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
		for _, tag := range []string{"constant", "linear0.5", "linear2", "cyclic",
			"cyclic-example", "cyclic-example-embargo", "fedavg-example-t5", "fedavg-example-t5-embargo"} {
			f := filepath.Join(root, "docs/results/strategies", period+"_"+tag+".json")
			r, err := ReadReport(f)
			if err != nil {
				t.Fatal(err)
			}
			if r.Setting.Areas != 400 || r.Setting.Split != "temporal" || r.Setting.Runs < 5 {
				t.Errorf("%s: %d areas, split %s, %d runs", f, r.Setting.Areas, r.Setting.Split, r.Setting.Runs)
			}
			if example := strings.Contains(tag, "example"); example {
				wantStrategy := fl.Cyclic
				if strings.HasPrefix(tag, "fedavg") {
					wantStrategy = fl.FedAvg
				}
				if r.Setting.Privacy != fl.ExampleLevel || r.Setting.Strategy != wantStrategy || r.Setting.Embargo != strings.HasSuffix(tag, "-embargo") {
					t.Errorf("%s: privacy %s, strategy %s, embargo %v", f, r.Setting.Privacy, r.Setting.Strategy, r.Setting.Embargo)
				}
				for _, res := range r.Results {
					// Example level: no client-level noise, and every LHA's
					// own accountant within its budget.
					if res.Guarantee != fl.ExampleLevel || res.Example == nil || !math.IsInf(float64(res.Epsilon), 1) ||
						!(float64(res.Example.SpentMax) <= res.Example.Epsilon) || res.Example.LHAs != 400 {
						t.Errorf("%s: result %+v", f, res.Example)
					}
				}
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
