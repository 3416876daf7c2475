package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/wasm/webbuild"
)

// TestServeFromAnotherDir builds the fedcast binary as `make build` does
// (the app embedded through an overlay), creates a study in a folder of
// its own and runs `serve` there, away from the source tree: the join page
// must work in Chromium.
func TestServeFromAnotherDir(t *testing.T) {
	ctx := browser(t)
	app := webApp(t)
	root := testkit.RepoRoot()
	bin := filepath.Join(t.TempDir(), "fedcast")
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	if err := webbuild.WriteOverlay(overlay, app.Dir, filepath.Join(root, "coordinator/cmd/fedcast/webapp")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-overlay", overlay, "-o", bin, "./coordinator/cmd/fedcast")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fedcast %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	created := run("study", "new", "--lhas", "2", "--epsilon", "2", "--rounds", "3", "--expected", "2", "--out", "study.json")
	token := regexp.MustCompile(`/join#(\S+)`).FindStringSubmatch(created)
	if token == nil {
		t.Fatalf("no join link in:\n%s", created)
	}
	sctx, cancel := context.WithCancel(context.Background())
	serve := exec.CommandContext(sctx, bin, "serve", "--study", "study.json", "--addr", "127.0.0.1:0")
	serve.Dir = work
	stdout, _ := serve.StdoutPipe()
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); serve.Wait() })
	var base, said string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		said += sc.Text() + "\n"
		if m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("serve printed no address:\n%s", said)
	}
	go io.Copy(io.Discard, stdout) // keep serve's output flowing
	within(t, ctx, 60*time.Second, "opening the join page of a binary run elsewhere", chromedp.Navigate(base+"/join#"+token[1]),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))
	if got := text(t, ctx, "#study"); !strings.Contains(got, "You take part as LHA 001") {
		t.Errorf("study card %q", got)
	}
	shot(t, ctx, "join-page")
}
