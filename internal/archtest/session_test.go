package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// TestHouseImports checks that imports between the top-level parts go one
// way only: ui imports only shared/...; wasm imports ui, shared/... and
// the websocket adapter internal/wsconn; shared imports none of the
// others; coordinator never imports wasm/ or ui/. Checked for the native
// build and for GOOS=js GOARCH=wasm, where the browser app and the
// Cloudflare worker (coordinator/worker) are built.
func TestHouseImports(t *testing.T) {
	for _, js := range []bool{false, true} {
		rules := []struct {
			pattern string
			from    string   // the part whose packages are checked
			allowed []string // parts it may import (besides itself)
		}{
			{"./ui/...", "ui", []string{"shared"}},
			{"./shared/...", "shared", nil},
			{"./wasm/...", "wasm", []string{"ui", "shared", "internal/wsconn"}},
			{"./coordinator/...", "coordinator", []string{"shared", "internal"}},
		}
		if js {
			// Under js the coordinator is the Cloudflare worker only.
			rules[3].pattern = "./coordinator/worker/..."
		}
		for _, r := range rules {
			deps := ourDeps(t, js, r.pattern)
			checked := 0
			for pkg, imports := range deps {
				if !under(pkg, r.from) {
					continue
				}
				checked++
				for _, imp := range imports {
					if under(imp, r.from) {
						continue
					}
					if !slices.ContainsFunc(r.allowed, func(a string) bool { return under(imp, a) }) {
						t.Errorf("js=%v: %s imports %s (%s may import only %v)", js, pkg, imp, r.from, r.allowed)
					}
				}
			}
			if checked == 0 {
				t.Errorf("js=%v: go list found no package under %s: the check would be vacuous", js, r.from)
			}
		}
	}
}

// TestCoordinatorTestsImportNoBrowserCode: the coordinator's tests may use
// ui only for the words the page shows (to compare the browser's text with
// them) and wasm/webbuild only to build the app they drive; they never
// import the browser entry point.
func TestCoordinatorTestsImportNoBrowserCode(t *testing.T) {
	rows := goList(t, false, "{{.ImportPath}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./coordinator/...")
	allowed := []string{modulePath + "/ui", modulePath + "/wasm/webbuild"}
	for _, r := range rows {
		if len(r) < 2 {
			continue
		}
		for _, imp := range strings.Fields(r[1]) {
			if (under(imp, "wasm") || under(imp, "ui")) && !slices.Contains(allowed, imp) {
				t.Errorf("the tests of %s import %s", r[0], imp)
			}
		}
	}
}

// TestSessionIsTransportFree: shared/session, the LHA's side of the
// protocol, reaches the coordinator only through its Conn interface: no
// net/http, no websocket package, no syscall/js in its dependencies (the
// standard library's own use of syscall/js under GOOS=js aside), and it
// builds for the browser.
func TestSessionIsTransportFree(t *testing.T) {
	const pkg = modulePath + "/shared/session"
	for _, js := range []bool{false, true} {
		g := listDeps(t, js, pkg)
		if _, found := g.imports[pkg]; !found {
			t.Fatalf("js=%v: go list -deps did not list %s", js, pkg)
		}
		for p, imports := range g.imports {
			std := g.std[p]
			if p == "net/http" || (!std && isForbidden(p)) {
				t.Errorf("js=%v: shared/session depends on %s", js, p)
			}
			if std {
				continue
			}
			for _, imp := range imports {
				if isForbidden(imp) {
					t.Errorf("js=%v: %s (a dependency of shared/session) imports %s", js, p, imp)
				}
			}
		}
	}
	cmd := exec.Command("go", "vet", "./shared/session")
	cmd.Dir = testkit.RepoRoot()
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go vet ./shared/session: %v\n%s", err, out)
	}
}
