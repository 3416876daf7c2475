package webbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRendererScript(t *testing.T) {
	dir := t.TempDir()
	src := "package domrender\n\nconst other = \"x\"\n\nconst jsHelperScript = \"(function(){if(window.vuguRender)return;\\\"q\\\"})()\"\n"
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RendererScript(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := `(function(){if(window.vuguRender)return;"q"})()`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := RendererScript(t.TempDir()); err == nil {
		t.Error("no error for a directory without the constant")
	}
}

// TestRendererScriptPinnedVugu reads the script from the pinned vugu
// module: it must start with the guard index.html relies on.
func TestRendererScriptPinnedVugu(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", VuguModule).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skipf("vugu module not in the module cache: %v", err)
	}
	s, err := RendererScript(filepath.Join(strings.TrimSpace(string(out)), "domrender"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "(function(){if(window.vuguRender)return;") {
		t.Errorf("renderer script starts %.60q: index.html's eval guard would not recognise it", s)
	}
}
