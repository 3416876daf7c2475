package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
	"github.com/fedcast/fedcast/wasm/webbuild"
)

// chromium finds Debian's Chromium, or skips (fails in CI).
func chromium(t *testing.T) string {
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
	testkit.Missing(t, "chromium not found (apt-get install -y chromium, or set FEDCAST_CHROMIUM)")
	return ""
}

// The browser page, served by the worker as static assets, joins a study
// on workerd beside two native `fedcast client`s, trains to the end and
// shows the coordinator's ε, which it recomputes itself.
func TestBrowserJoinsWorkerStudy(t *testing.T) {
	bin := workerdPath(t)
	path := chromium(t)
	web := t.TempDir()
	ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel0()
	if _, err := webbuild.Build(ctx0, webbuild.Options{Out: web, Root: testkit.RepoRoot()}); err != nil {
		t.Fatalf("building the browser app: %v", err)
	}
	addr := freeAddr(t)
	names := []string{"Browser", "B", "C"}
	s := newStudy(t, names, addr, "--epsilon", "3", "--rounds", "3", "--round-length", "6s")
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), web)

	// The page and its headers: serve's Content-Security-Policy, the app
	// gzip-encoded for a browser that takes it.
	res, err := http.Get(w.base + "/join")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != 200 || !strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval' 'sha256-") {
		t.Fatalf("GET /join: %s, CSP %q", res.Status, csp)
	}

	for _, c := range []struct {
		enc, ce string
		magic   []byte
	}{{"gzip", "gzip", []byte{0x1f, 0x8b}}, {"identity", "", []byte("\x00asm")}} {
		req, _ := http.NewRequest(http.MethodGet, w.base+"/main.wasm", nil)
		req.Header.Set("Accept-Encoding", c.enc)
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		_, err = io.ReadFull(res.Body, head)
		res.Body.Close()
		if err != nil || res.Header.Get("Content-Encoding") != c.ce || res.Header.Get("Content-Type") != "application/wasm" || !bytes.HasPrefix(head, c.magic) {
			t.Errorf("GET /main.wasm (Accept-Encoding %s): %v, Content-Encoding %q, type %q, starts % x", c.enc, err, res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"), head)
		}
	}

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
	defer func() { cancelC(); cancelA() }()
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			t.Logf("console %s: %s", m.Type, m.Text)
		}
	}()
	step := func(d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		if err := chromedp.Do(tctx, steps...); err != nil {
			dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
			defer dcancel()
			html, _ := chromedp.Run(dctx, chromedp.OuterHTML(chromedp.CSS("body")))
			if len(html) > 3000 {
				html = html[:3000] + "…"
			}
			t.Fatalf("%s: %v\npage:\n%s\nworkerd:\n%s", what, err, html, w.log)
		}
	}
	text := func(sel string) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		v, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return v
	}
	step(90*time.Second, "opening the join link", chromedp.Navigate(s.links[0]),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))
	step(30*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{s.data[0]}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")))
	step(10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	var clients []*client
	for i := 1; i < len(names); i++ {
		clients = append(clients, startClient(t, s, i))
	}
	step(3*time.Minute, "training to the end", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	for _, c := range clients {
		c.wait(t, time.Minute)
	}
	st := w.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	if want, got := "ε = "+ui.FormatEpsilon(st.EpsilonSpent), text("#epsilon"); got != want {
		t.Errorf("the page shows %q, the coordinator's status %q", got, want)
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if cls, err := chromedp.Run(tctx, chromedp.AttributeValue(chromedp.CSS("#epsilon-check"), "class")); err != nil || !strings.Contains(cls.Value, "ok") {
		t.Errorf("the page's own ε recomputation: class %q (%v): %s", cls.Value, err, text("#epsilon-check"))
	}
	if got := text("#round"); got != "Study ended: 3 of 3 rounds done" { // ui/stage.go
		t.Errorf("round shown %q", got)
	}
	t.Logf("the browser page trained 3 rounds against the worker; it shows %s", text("#epsilon"))
}
