package archtest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
)

func matches(p string, prefixes []string) bool {
	for _, f := range prefixes {
		if p == f || strings.HasPrefix(p, f+"/") {
			return true
		}
	}
	return false
}

// rule is one "never" of docs/architecture.md: no package in the
// dependency graph of from (its own non-standard dependencies included,
// the standard library's own imports excepted) imports a package under
// one of never.
type rule struct {
	doc   string // the sentence of docs/architecture.md
	from  []string
	never []string
	// allow names packages under never that are not what the sentence
	// forbids (net/url parses a join link; it opens no connection).
	allow []string
	goos  []string
	// min is the least number of our packages the graph must hold, so that
	// a pattern that matches nothing cannot pass vacuously.
	min int
}

var transports = []string{"net/http", "github.com/coder/websocket", "nhooyr.io/websocket"}

var rules = []rule{
	{
		doc:  "shared/ knows no transport, no browser and no screen, and imports nothing above it",
		from: []string{"./shared/..."},
		never: append(append([]string{"syscall/js", "github.com/vugu", module + "ui", module + "wasm", module + "coordinator", module + "internal"},
			transports...), "net"),
		allow: []string{"net/url"},
		goos:  []string{"", "js"}, min: 8,
	},
	{
		doc:   "the pure study package (coordinator/study) never imports the ledger, storage or the network, and builds for wasm",
		from:  []string{"./coordinator/study"},
		never: append([]string{module + "coordinator/ledger", module + "coordinator/server", "database/sql", "modernc.org", "github.com/mattn", "github.com/prometheus", "syscall/js", "net"}, transports...),
		goos:  []string{"", "js"}, min: 2,
	},
	{
		doc:   "the Cloudflare worker (coordinator/worker) runs the pure study package: it never imports the ledger, the server or a database",
		from:  []string{"./coordinator/worker/..."},
		never: []string{module + "coordinator/ledger", module + "coordinator/server", module + "coordinator/lhaconn", "database/sql", "modernc.org"},
		goos:  []string{"", "js"}, min: 4,
	},
	{
		doc:   "ui never imports the server (nor anything of the coordinator)",
		from:  []string{"./ui"},
		never: []string{module + "coordinator"},
		goos:  []string{"", "js"}, min: 2,
	},
	{
		doc:   "the server never renders components",
		from:  []string{"./coordinator/server", "./coordinator/study", "./coordinator/ledger"},
		never: []string{"github.com/vugu", module + "ui", module + "wasm"},
		goos:  []string{""}, min: 3,
	},
}

// TestNeverRules checks every "never" of docs/architecture.md's layout on
// the real import graph (go list -deps), natively and for GOOS=js.
func TestNeverRules(t *testing.T) {
	for _, r := range rules {
		for _, goos := range r.goos {
			g := listDeps(t, goos == "js", r.from...)
			ours := 0
			for pkg, imports := range g.imports {
				if g.std[pkg] {
					continue // the standard library's own imports (net under os/exec…) are not ours
				}
				if strings.HasPrefix(pkg, module) {
					ours++
				}
				for _, imp := range imports {
					if matches(imp, r.never) && !matches(imp, r.allow) {
						t.Errorf("%s — GOOS=%q: %s imports %s", r.doc, goos, pkg, imp)
					}
				}
			}
			if ours < r.min {
				t.Errorf("%s — GOOS=%q: the graph of %v holds only %d of our packages: the check would be vacuous", r.doc, goos, r.from, ours)
			}
		}
	}
}

// TestRulesCatchViolations: the rule checker reports a real import that a
// rule forbids (coordinator/server does import the ledger and net/http),
// so that a broken checker cannot pass silently.
func TestRulesCatchViolations(t *testing.T) {
	g := listDeps(t, false, "./coordinator/server")
	found := map[string]bool{}
	for pkg, imports := range g.imports {
		if g.std[pkg] {
			continue
		}
		for _, imp := range imports {
			for _, r := range rules[1].never {
				if matches(imp, []string{r}) {
					found[r] = true
				}
			}
		}
	}
	for _, want := range []string{module + "coordinator/ledger", "net/http", "github.com/coder/websocket"} {
		if !found[want] {
			t.Errorf("the checker did not see coordinator/server's import of %s", want)
		}
	}
}

// TestPureStudyBuildsForWasm: the Cloudflare worker compiles the round
// logic to wasm.
func TestPureStudyBuildsForWasm(t *testing.T) {
	cmd := exec.Command("go", "build", "./coordinator/study")
	cmd.Dir = testkit.RepoRoot()
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build ./coordinator/study: %v\n%s", err, out)
	}
}
