package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/wasm/webbuild"
)

// chromiumPath finds the browser, or skips (fails in CI).
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("FEDCAST_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	testkit.Missing(t, "e2e: chromium not found (apt-get install -y chromium, or set FEDCAST_CHROMIUM)")
	return ""
}

var (
	buildOnce sync.Once
	buildRes  *webbuild.Result
	buildErr  error
	buildDir  string
)

// webApp builds the browser app once per test binary and returns its
// directory.
func webApp(t testing.TB) *webbuild.Result {
	t.Helper()
	buildOnce.Do(func() {
		root := testkit.RepoRoot()
		if root == "" {
			buildErr = fmt.Errorf("e2e: cannot find the module root")
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "fedcast-web-")
		if buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		buildRes, buildErr = webbuild.Build(ctx, webbuild.Options{Out: buildDir, Root: root})
	})
	if buildErr != nil {
		t.Fatalf("building the web app: %v", buildErr)
	}
	return buildRes
}

var (
	artOnce sync.Once
	artDir  string
)

// artifacts returns the directory for screenshots.
func artifacts(t testing.TB) string {
	t.Helper()
	artOnce.Do(func() {
		artDir = os.Getenv("FEDCAST_ARTIFACTS")
		if artDir == "" {
			var err error
			if artDir, err = os.MkdirTemp("", "fedcast-e2e-"); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(artDir, 0o755)
		fmt.Fprintf(os.Stderr, "e2e: screenshots in %s\n", artDir)
	})
	return artDir
}

// browser starts a headless Chromium with a fresh profile and returns a
// chromedp context for one tab.
func browser(t testing.TB) context.Context {
	t.Helper()
	path := chromiumPath(t)
	// chromedp's defaults (headless, no background throttling of other
	// tabs, …) plus the flags that work on this machine (stack notes).
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1100, 1400),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	// Log the page's console (errors from the app, CSP violations).
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			t.Logf("console %s: %s", m.Type, m.Text)
		}
	}()
	return ctx
}

// within runs steps with a deadline, so a page that never gets ready fails
// the test instead of hanging it.
func within(t testing.TB, ctx context.Context, d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		defer dcancel()
		html, _ := chromedp.Run(dctx, chromedp.OuterHTML(chromedp.CSS("body")))
		if len(html) > 4000 {
			html = html[:4000] + "…"
		}
		t.Fatalf("%s: %v\npage body:\n%s", what, err, html)
	}
}

// shot saves a full-page screenshot as name.png in the artefact directory.
func shot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	buf, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(artifacts(t), t.Name()+"-"+name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

type chromedpCtx = context.Context

func itoa(n int) string { return fmt.Sprint(n) }

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string { return strconv.Quote(s) }

// poll waits until the JavaScript expression is truthy, checking every
// 100 ms (the default waits for animation frames, which a tab in the
// background does not get).
func poll(expr string) chromedp.Action[chromedp.Void] {
	return void(chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond)))
}

// void drops an action's value.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

// shotOf saves a screenshot of one element as name.png.
func shotOf(t testing.TB, ctx context.Context, sel, name string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	buf, err := chromedp.Run(tctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(artifacts(t), t.Name()+"-"+name+".png"), buf, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// download clicks the link sel in the tab of ctx with the browser saving
// downloads to a fresh folder, waits for the file name to appear there
// complete, and returns its content.
func download(t *testing.T, ctx context.Context, sel, name string) []byte {
	t.Helper()
	dir := t.TempDir()
	allow := func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
		return chromedp.Void{}, err
	}
	within(t, ctx, 10*time.Second, "allowing downloads", allow, chromedp.Click(chromedp.CSS(sel)))
	path := filepath.Join(dir, name)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			if _, err := os.Stat(path + ".crdownload"); os.IsNotExist(err) {
				return b
			}
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("download of %s: no complete %s in %s (%v)", sel, name, dir, entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
