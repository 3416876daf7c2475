// Package archtest checks fedcast's architectural rules: the algorithm is
// free of transport, and the shared code builds for the browser.
package archtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// forbidden are packages that no non-standard package in the dependency
// graph of shared/... may import: the round logic must run and be tested
// with no network, and the same code must build for wasm and native. (The
// standard library itself imports syscall/js under GOOS=js; that is not our
// code reaching for the browser.)
var forbidden = []string{"net/http", "syscall/js", "github.com/coder/websocket", "nhooyr.io/websocket"}

func isForbidden(p string) bool {
	for _, f := range forbidden {
		if p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

func TestSharedIsTransportFree(t *testing.T) {
	for _, goos := range []string{"", "js"} {
		g := listDeps(t, goos == "js", "./shared/...")
		ours := 0
		for pkg, imports := range g.imports {
			if g.std[pkg] {
				// net/http must not even be reachable through the standard library.
				if goos == "" && isForbidden(pkg) {
					t.Errorf("shared/... depends on %s", pkg)
				}
				continue
			}
			if strings.HasPrefix(pkg, module+"shared/") {
				ours++
			}
			if isForbidden(pkg) {
				t.Errorf("GOOS=%q: shared/... depends on %s", goos, pkg)
			}
			for _, imp := range imports {
				if isForbidden(imp) {
					t.Errorf("GOOS=%q: %s imports %s", goos, pkg, imp)
				}
			}
		}
		if ours < 6 {
			t.Fatalf("GOOS=%q: go list found only %d shared packages: the check would be vacuous", goos, ours)
		}
	}
}

func TestSharedBuildsForWasm(t *testing.T) {
	cmd := exec.Command("go", "build", "./shared/...")
	cmd.Dir = testkit.RepoRoot()
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build ./shared/...: %v\n%s", err, out)
	}
}
