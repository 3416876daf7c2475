// Package archtest checks fedcast's architectural rules: the algorithm is
// free of transport, and the shared code builds for the browser.
package archtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// forbidden are packages no code under shared/ may depend on, directly or
// indirectly: the round logic must run and be tested with no network, and
// the same code must build for wasm and native.
var forbidden = []string{"net/http", "syscall/js", "github.com/coder/websocket", "nhooyr.io/websocket"}

func TestSharedIsTransportFree(t *testing.T) {
	for _, goos := range []string{"", "js"} {
		cmd := exec.Command("go", "list", "-deps", "./shared/...")
		cmd.Dir = testkit.RepoRoot()
		if goos == "js" {
			cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list (GOOS=%q): %v\n%s", goos, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list returned too little to be real: %q", out)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("GOOS=%q: shared/... depends on %s", goos, d)
				}
			}
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
