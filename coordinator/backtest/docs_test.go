package backtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// TestBacktestDocsUpToDate: each per-quarter table in docs/results/backtest
// is what the command writes from the JSON beside it, so the numbers of
// docs/results.md, "Over time", are the runs' numbers.
func TestBacktestDocsUpToDate(t *testing.T) {
	dir := filepath.Join(testkit.RepoRoot(), "docs", "results", "backtest")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("%d JSON files in %s: %v", len(files), dir, err)
	}
	for _, f := range files {
		var s Summary
		if err := json.Unmarshal(must(os.ReadFile(f)), &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var want bytes.Buffer
		fmt.Fprintf(&want, "%s\n\n", s.Headline())
		if err := s.Markdown(&want); err != nil {
			t.Fatal(err)
		}
		md := strings.TrimSuffix(f, ".json") + ".md"
		if got := must(os.ReadFile(md)); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s is not what the backtest writes from %s: re-run the command (docs/results.md, \"Over time\")", md, f)
		}
		if _, err := os.Stat(strings.TrimSuffix(f, ".json") + ".svg"); err != nil {
			t.Errorf("no figure beside %s: %v", f, err)
		}
	}
}
