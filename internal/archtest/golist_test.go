package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

// modulePath is fedcast's module; module is the prefix of its packages.
const (
	modulePath = "github.com/fedcast/fedcast"
	module     = modulePath + "/"
)

// goList is the package's one reader of `go list`: it runs go list -f f
// with args from the repository root (for GOOS=js GOARCH=wasm when js)
// and returns its non-empty lines split at tabs.
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

// graph is the import graph of some packages and their dependencies
// (tests left out), for one GOOS.
type graph struct {
	std     map[string]bool
	imports map[string][]string
}

// listDeps reads the graph of patterns (go list -deps).
func listDeps(t *testing.T, js bool, patterns ...string) graph {
	t.Helper()
	rows := goList(t, js, "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", append([]string{"-deps"}, patterns...)...)
	g := graph{std: map[string]bool{}, imports: map[string][]string{}}
	for _, r := range rows {
		if len(r) < 3 {
			continue
		}
		g.std[r[0]] = r[1] == "true"
		g.imports[r[0]] = strings.Fields(r[2])
	}
	return g
}

// ourDeps returns the module's packages in the (non-test) dependency graph
// of patterns, each with the module packages it imports directly.
func ourDeps(t *testing.T, js bool, patterns ...string) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	for pkg, imports := range listDeps(t, js, patterns...).imports {
		if !inModule(pkg) {
			continue
		}
		var ours []string
		for _, imp := range imports {
			if inModule(imp) {
				ours = append(ours, imp)
			}
		}
		deps[pkg] = ours
	}
	return deps
}

func inModule(p string) bool { return p == modulePath || strings.HasPrefix(p, module) }

// under reports whether package p is dir of the module or below it.
func under(p, dir string) bool {
	d := module + dir
	return p == d || strings.HasPrefix(p, d+"/")
}
