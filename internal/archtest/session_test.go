package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

const modulePath = "github.com/fedcast/fedcast"

// goList runs go list with format f over patterns (for GOOS=js GOARCH=wasm
// when js) and returns its lines split at tabs.
func goList(t *testing.T, js bool, f string, args ...string) [][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", f}, args...)...)
	cmd.Dir = testkit.RepoRoot()
	if js {
		cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %v (js=%v): %v\n%s", args, js, err, msg)
	}
	var rows [][]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	return rows
}

// ourDeps returns the module's packages in the (non-test) dependency graph
// of patterns, each with the module packages it imports directly.
func ourDeps(t *testing.T, js bool, patterns ...string) map[string][]string {
	t.Helper()
	rows := goList(t, js, "{{.ImportPath}}\t{{join .Imports \" \"}}", append([]string{"-deps"}, patterns...)...)
	deps := map[string][]string{}
	for _, r := range rows {
		if !inModule(r[0]) {
			continue
		}
		var ours []string
		if len(r) > 1 {
			for _, imp := range strings.Fields(r[1]) {
				if inModule(imp) {
					ours = append(ours, imp)
				}
			}
		}
		deps[r[0]] = ours
	}
	return deps
}

func inModule(p string) bool { return p == modulePath || strings.HasPrefix(p, modulePath+"/") }

// under reports whether package p is dir of the module or below it.
func under(p, dir string) bool {
	d := modulePath + "/" + dir
	return p == d || strings.HasPrefix(p, d+"/")
}

// TestHouseImports checks that imports between the top-level parts go one
// way only: ui imports only shared/...; wasm imports ui and shared/...;
// shared imports none of the others; coordinator never imports wasm/ or
// ui/. Checked for the native build and for GOOS=js GOARCH=wasm, where the
// browser app is built.
func TestHouseImports(t *testing.T) {
	for _, js := range []bool{false, true} {
		rules := []struct {
			pattern string
			from    string   // the part whose packages are checked
			allowed []string // parts it may import (besides itself)
		}{
			{"./ui/...", "ui", []string{"shared"}},
			{"./shared/...", "shared", nil},
			{"./wasm/...", "wasm", []string{"ui", "shared"}},
			{"./coordinator/...", "coordinator", []string{"shared", "internal"}},
		}
		for _, r := range rules {
			if js && r.from == "coordinator" {
				continue // the coordinator is not built for the browser (the worker brings its own check)
			}
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
		rows := goList(t, js, "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", "-deps", pkg)
		found := false
		for _, r := range rows {
			if len(r) < 3 {
				continue
			}
			p, std, imports := r[0], r[1] == "true", strings.Fields(r[2])
			found = found || p == pkg
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
		if !found {
			t.Fatalf("js=%v: go list -deps did not list %s", js, pkg)
		}
	}
	cmd := exec.Command("go", "vet", "./shared/session")
	cmd.Dir = testkit.RepoRoot()
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go vet ./shared/session: %v\n%s", err, out)
	}
}
