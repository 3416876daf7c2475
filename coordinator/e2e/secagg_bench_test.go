package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// benchPage runs a Go test binary compiled to wasm in the page, with its
// flags in go.argv, and sets the title to "done" when it exits.
const benchPage = `<!doctype html><meta charset="utf-8"><script src="wasm_exec.js"></script><script>
const go = new Go();
go.argv = ["secagg.test", "-test.run=XXX", "-test.bench=LHA", "-test.benchtime=20x", "-test.count=3"];
WebAssembly.instantiateStreaming(fetch("secagg.wasm"), go.importObject).then(r => go.run(r.instance)).then(() => { document.title = "done"; });
</script>`

// TestSecaggBenchInChromium measures an LHA's extra work per round for
// two-server secure aggregation (shared/secagg's BenchmarkLHA: encode,
// seed, XOF, share, HPKE seal, marshal) in Chromium, for
// docs/benchmarks.md. An experiment: FEDCAST_BROWSER_BENCH=1.
func TestSecaggBenchInChromium(t *testing.T) {
	if os.Getenv("FEDCAST_BROWSER_BENCH") != "1" {
		t.Skip("an experiment: set FEDCAST_BROWSER_BENCH=1")
	}
	dir := t.TempDir()
	build := exec.Command("go", "test", "-c", "-o", filepath.Join(dir, "secagg.wasm"), "github.com/fedcast/fedcast/shared/secagg")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the wasm test binary: %v\n%s", err, out)
	}
	js, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"wasm_exec.js": js, "index.html": []byte(benchPage)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer hs.Close()
	ctx := browser(t)
	var mu sync.Mutex
	var lines []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			mu.Lock()
			lines = append(lines, m.Text)
			mu.Unlock()
		}
	}()
	within(t, ctx, 5*time.Minute, "running the benchmark in the page", chromedp.Navigate(hs.URL+"/index.html"),
		poll(`document.title === "done"`))
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "BenchmarkLHA") {
			t.Log(l)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no benchmark lines from the page:\n%s", strings.Join(lines, "\n"))
	}
}
