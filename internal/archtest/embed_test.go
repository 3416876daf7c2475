package archtest

import (
	"strings"
	"testing"
)

// TestWebAppEmbeddedOnlyByCommand: the browser app is embedded by the
// fedcast command alone. A library package that embedded it would carry
// 2 MB of app into everything that imports it (a Workers bundle, the
// wasm client itself).
func TestWebAppEmbeddedOnlyByCommand(t *testing.T) {
	for _, goos := range []string{"", "js"} {
		found := false
		for _, r := range goList(t, goos == "js", "{{.ImportPath}}\t{{join .EmbedPatterns \" \"}}", "-e", "./...") {
			pkg, patterns := r[0], ""
			if len(r) > 1 {
				patterns = r[1]
			}
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
