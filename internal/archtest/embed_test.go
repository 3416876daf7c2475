package archtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// TestWebAppEmbeddedOnlyByCommand: the browser app is embedded by the
// fedcast command alone. A library package that embedded it would carry
// 2 MB of app into everything that imports it (a Workers bundle, the
// wasm client itself).
func TestWebAppEmbeddedOnlyByCommand(t *testing.T) {
	for _, goos := range []string{"", "js"} {
		cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{join .EmbedPatterns \" \"}}", "./...")
		cmd.Dir = testkit.RepoRoot()
		if goos == "js" {
			cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (GOOS=%q): %v", goos, err)
		}
		found := false
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, patterns, _ := strings.Cut(line, "\t")
			if patterns == "" {
				continue
			}
			if pkg == "github.com/fedcast/fedcast/coordinator/cmd/fedcast" && strings.Contains(patterns, "webapp") {
				found = true
				continue
			}
			if strings.Contains(patterns, "webapp") || strings.Contains(patterns, "web") {
				t.Errorf("GOOS=%q: %s embeds %q: only the fedcast command may embed the browser app", goos, pkg, patterns)
			}
		}
		if goos == "" && !found {
			t.Error("the fedcast command does not embed webapp/")
		}
	}
}
