package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testPage = `<!doctype html><html><head><script src="wasm_exec.js"></script>
<script>
  console.log("loader");
</script></head><body></body></html>`

// app writes a fake built app into a temp dir and returns the dir and the
// uncompressed wasm bytes.
func app(t *testing.T, withGz bool) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	wasm := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 fedcast "), 500)
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", []byte(testPage))
	write("wasm_exec.js", []byte("// go glue\n"))
	write("vugu-render.js", []byte("// vugu renderer\n"))
	write("main.wasm", wasm)
	if withGz {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(wasm)
		zw.Close()
		write("main.wasm.gz", buf.Bytes())
		// The .gz must not be older than main.wasm.
		now := time.Now()
		os.Chtimes(filepath.Join(dir, "main.wasm"), now.Add(-time.Second), now.Add(-time.Second))
	}
	return dir, wasm
}

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHandlerRoutes(t *testing.T) {
	dir, _ := app(t, true)
	h := Handler(dir)
	for _, tc := range []struct {
		method, path string
		status       int
		ctype        string
		contains     string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", "loader"},
		{"GET", "/join", 200, "text/html; charset=utf-8", "loader"},
		{"GET", "/join/", 200, "text/html; charset=utf-8", "loader"},
		{"GET", "/admin", 200, "text/html; charset=utf-8", "loader"},
		{"HEAD", "/admin", 200, "text/html; charset=utf-8", ""},
		{"GET", "/wasm_exec.js", 200, "text/javascript; charset=utf-8", "go glue"},
		{"GET", "/vugu-render.js", 200, "text/javascript; charset=utf-8", "vugu renderer"},
		{"GET", "/main.wasm", 200, "application/wasm", "fedcast"},
		{"GET", "/index.html", 404, "", ""},
		{"GET", "/main.wasm.gz", 404, "", ""},
		{"GET", "/../go.mod", 404, "", ""},
		{"GET", "/api/status", 404, "", ""},
		{"POST", "/join", 405, "", ""},
	} {
		r := get(t, h, tc.method, tc.path, nil)
		if r.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, r.StatusCode, tc.status)
			continue
		}
		if tc.status != 200 {
			continue
		}
		if got := r.Header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, got, tc.ctype)
		}
		if got := r.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s %s: Cache-Control %q, want no-cache", tc.method, tc.path, got)
		}
		if r.Header.Get("ETag") == "" {
			t.Errorf("%s %s: no ETag", tc.method, tc.path)
		}
		if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q", tc.method, tc.path, got)
		}
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "'wasm-unsafe-eval'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s %s: CSP %q lacks wasm-unsafe-eval or frame-ancestors", tc.method, tc.path, csp)
		}
		b := body(t, r)
		if !bytes.Contains(b, []byte(tc.contains)) {
			t.Errorf("%s %s: body lacks %q", tc.method, tc.path, tc.contains)
		}
	}
}

func TestHandlerGzip(t *testing.T) {
	dir, wasm := app(t, true)
	h := Handler(dir)
	for _, tc := range []struct {
		accept string
		gz     bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br", true},
		{"br;q=1.0, GZIP;q=0.5", true},
		{"gzip;q=0", false},
		{"deflate", false},
		{"identity", false},
	} {
		r := get(t, h, "GET", "/main.wasm", map[string]string{"Accept-Encoding": tc.accept})
		b := body(t, r)
		if r.StatusCode != 200 {
			t.Fatalf("Accept-Encoding %q: status %d", tc.accept, r.StatusCode)
		}
		if got := r.Header.Get("Content-Type"); got != "application/wasm" {
			t.Errorf("Accept-Encoding %q: Content-Type %q", tc.accept, got)
		}
		if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: no Vary: Accept-Encoding", tc.accept)
		}
		gotGz := r.Header.Get("Content-Encoding") == "gzip"
		if gotGz != tc.gz {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.accept, gotGz, tc.gz)
		}
		if gotGz {
			if len(b) >= len(wasm) {
				t.Errorf("gzip body %d bytes, not smaller than %d", len(b), len(wasm))
			}
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(b, wasm) {
			t.Errorf("Accept-Encoding %q: body differs from main.wasm", tc.accept)
		}
	}
}

func TestHandlerStaleGzipIgnored(t *testing.T) {
	dir, wasm := app(t, true)
	// A rebuilt main.wasm newer than main.wasm.gz: the stale .gz must not be sent.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "main.wasm"), later, later)
	r := get(t, Handler(dir), "GET", "/main.wasm", map[string]string{"Accept-Encoding": "gzip"})
	if r.Header.Get("Content-Encoding") != "" || !bytes.Equal(body(t, r), wasm) {
		t.Fatal("stale main.wasm.gz was served")
	}
}

func TestHandlerNoGzipFile(t *testing.T) {
	dir, wasm := app(t, false)
	r := get(t, Handler(dir), "GET", "/main.wasm", map[string]string{"Accept-Encoding": "gzip"})
	if r.Header.Get("Content-Encoding") != "" || !bytes.Equal(body(t, r), wasm) {
		t.Fatal("without main.wasm.gz the plain file must be served")
	}
}

func TestHandlerRevalidation(t *testing.T) {
	dir, _ := app(t, true)
	h := Handler(dir)
	for _, path := range []string{"/", "/main.wasm", "/wasm_exec.js"} {
		for _, enc := range []string{"", "gzip"} {
			r := get(t, h, "GET", path, map[string]string{"Accept-Encoding": enc})
			etag := r.Header.Get("ETag")
			r2 := get(t, h, "GET", path, map[string]string{"Accept-Encoding": enc, "If-None-Match": etag})
			if r2.StatusCode != http.StatusNotModified {
				t.Errorf("%s (%q): If-None-Match %s gave %d, want 304", path, enc, etag, r2.StatusCode)
			}
		}
	}
	// The gzip and identity variants must not share an ETag.
	a := get(t, h, "GET", "/main.wasm", nil).Header.Get("ETag")
	b := get(t, h, "GET", "/main.wasm", map[string]string{"Accept-Encoding": "gzip"}).Header.Get("ETag")
	if a == b {
		t.Errorf("identity and gzip variants share ETag %s", a)
	}
}

func TestHandlerNotBuilt(t *testing.T) {
	h := Handler(filepath.Join(t.TempDir(), "missing"))
	r := get(t, h, "GET", "/join", nil)
	if r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", r.StatusCode)
	}
	if b := body(t, r); !bytes.Contains(b, []byte("make build")) {
		t.Errorf("message %q does not say how to build the app", b)
	}
	if r := get(t, h, "GET", "/main.wasm", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("missing main.wasm: status %d, want 404", r.StatusCode)
	}
}

func TestPageCSPHashesInlineScript(t *testing.T) {
	dir, _ := app(t, true)
	r := get(t, Handler(dir), "GET", "/join", nil)
	csp := r.Header.Get("Content-Security-Policy")
	inline := "\n  console.log(\"loader\");\n"
	sum := sha256.Sum256([]byte(inline))
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(csp, want) {
		t.Fatalf("CSP %q lacks the inline loader's hash %s", csp, want)
	}
	if strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval' 'unsafe-inline'") {
		t.Fatal("scripts must not be allowed inline wholesale")
	}
}

func TestInlineScripts(t *testing.T) {
	for _, tc := range []struct {
		page string
		want []string
	}{
		{"", nil},
		{`<script src="a.js"></script>`, nil},
		{`<SCRIPT>x()</SCRIPT>`, []string{"x()"}},
		{`<script type="module">a</script><script src=b.js></script><script>c</script>`, []string{"a", "c"}},
		{`<script data-src="x">d</script>`, []string{"d"}},
		{`<scripts>no</scripts><script>e</script>`, []string{"e"}},
		{`<script>unterminated`, nil},
		{`<script src>f</script>`, nil},
		{"<p>é</p><script>\u00e9g</script>", []string{"\u00e9g"}},
	} {
		got := InlineScripts([]byte(tc.page))
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("InlineScripts(%q) = %q, want %q", tc.page, got, tc.want)
		}
	}
}

func FuzzInlineScripts(f *testing.F) {
	f.Add(testPage)
	f.Add(`<script src=x></script><script>y</script>`)
	f.Fuzz(func(t *testing.T, page string) {
		for _, s := range InlineScripts([]byte(page)) {
			if !strings.Contains(page, s) {
				t.Fatalf("script body %q is not a substring of the page", s)
			}
		}
	})
}

func ExampleContentSecurityPolicy() {
	page := []byte(`<script src="wasm_exec.js"></script>`)
	for _, d := range strings.Split(ContentSecurityPolicy(page), "; ") {
		fmt.Println(d)
	}
	// Output:
	// default-src 'self'
	// script-src 'self' 'wasm-unsafe-eval'
	// style-src 'self' 'unsafe-inline'
	// img-src 'self' data: blob:
	// connect-src 'self'
	// object-src 'none'
	// base-uri 'none'
	// form-action 'none'
	// frame-ancestors 'none'
}
