package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultDir is where `make web` writes the app, relative to the module root.
const DefaultDir = "bin/web"

// Pages are the paths answered with index.html. The app reads the path
// (and the token in the fragment) to decide which page to show.
var Pages = []string{"/", "/join", "/admin"}

// Handler returns an http.Handler serving the built app from dir (DefaultDir
// when dir is ""). It answers GET and HEAD for the paths in Pages,
// /wasm_exec.js and /main.wasm, and 404 for anything else; mount it at the
// root and register API and websocket routes beside it. Files are read on
// every request, so rebuilding the app needs no restart.
func Handler(dir string) http.Handler {
	if dir == "" {
		dir = DefaultDir
	}
	return &handler{fsys: os.DirFS(dir), where: dir}
}

// HandlerFS is Handler for an app held in fsys (an embedded copy: see
// command fedcast); where names it in error messages. An index.html that
// is a Placeholder is served with status 503.
func HandlerFS(fsys fs.FS, where string) http.Handler {
	return &handler{fsys: fsys, where: where}
}

// PlaceholderMark is in the index.html of a directory that stands in for
// the app before it is built (the fedcast command embeds one, so that it
// compiles on a fresh clone).
const PlaceholderMark = `<meta name="fedcast-placeholder" content="1">`

// IsPlaceholder reports whether fsys holds a placeholder instead of the
// built app (or no index.html at all).
func IsPlaceholder(fsys fs.FS) bool {
	page, err := fs.ReadFile(fsys, "index.html")
	return err != nil || bytes.Contains(page, []byte(PlaceholderMark))
}

type handler struct {
	fsys  fs.FS
	where string
	tags  sync.Map // file name + variant → ETag of an embedded file
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "web: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch p := r.URL.Path; {
	case isPage(p):
		h.servePage(w, r)
	case p == "/wasm_exec.js", p == "/vugu-render.js":
		h.serveFile(w, r, p[1:], "text/javascript; charset=utf-8", false)
	case p == "/main.wasm":
		h.serveFile(w, r, "main.wasm", "application/wasm", true)
	default:
		http.NotFound(w, r)
	}
}

func isPage(p string) bool {
	for _, q := range Pages {
		if p == q || (q != "/" && p == q+"/") {
			return true
		}
	}
	return false
}

// servePage sends index.html with a Content-Security-Policy that admits its
// inline scripts by hash.
func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	page, err := fs.ReadFile(h.fsys, "index.html")
	if err != nil {
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy(nil))
		http.Error(w, fmt.Sprintf("web: the browser app is not built (no index.html in %s): run `make build`, or pass the directory holding it (--web DIR)", h.where), http.StatusServiceUnavailable)
		return
	}
	mod := time.Time{}
	if fi, err := fs.Stat(h.fsys, "index.html"); err == nil {
		mod = fi.ModTime()
	}
	sum := sha256.Sum256(page)
	w.Header().Set("Content-Security-Policy", ContentSecurityPolicy(page))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if bytes.Contains(page, []byte(PlaceholderMark)) {
		w.WriteHeader(http.StatusServiceUnavailable)
		if r.Method != http.MethodHead {
			w.Write(page)
		}
		return
	}
	w.Header().Set("ETag", `"`+base64.RawURLEncoding.EncodeToString(sum[:12])+`"`)
	http.ServeContent(w, r, "index.html", mod, bytes.NewReader(page))
}

// serveFile sends name with the given type. With gz set, a sibling name.gz
// is sent instead (Content-Encoding: gzip) when the client accepts gzip and
// the .gz file is at least as new as the uncompressed one.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, name, ctype string, gz bool) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy(nil))
	fi, err := fs.Stat(h.fsys, name)
	if err != nil || fi.IsDir() {
		http.Error(w, fmt.Sprintf("web: %s is missing from %s: run `make build`", name, h.where), http.StatusNotFound)
		return
	}
	if gz {
		hd.Add("Vary", "Accept-Encoding")
		if gfi, err := fs.Stat(h.fsys, name+".gz"); err == nil && !gfi.IsDir() && !gfi.ModTime().Before(fi.ModTime()) && acceptsGzip(r) {
			if f, err := h.fsys.Open(name + ".gz"); err == nil {
				defer f.Close()
				if rs, ok := f.(io.ReadSeeker); ok {
					hd.Set("Content-Encoding", "gzip")
					h.send(w, r, rs, gfi, ctype, "gz")
					return
				}
			}
		}
	}
	f, err := h.fsys.Open(name)
	if err != nil {
		http.Error(w, "web: cannot read "+name, http.StatusInternalServerError)
		return
	}
	defer f.Close()
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		http.Error(w, "web: cannot read "+name, http.StatusInternalServerError)
		return
	}
	h.send(w, r, rs, fi, ctype, "id")
}

func (h *handler) send(w http.ResponseWriter, r *http.Request, f io.ReadSeeker, fi fs.FileInfo, ctype, variant string) {
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("Cache-Control", "no-cache")
	tag := strconv.FormatInt(fi.Size(), 36) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 36)
	if fi.ModTime().IsZero() {
		// An embedded file has no time: tag it by its content (hashed
		// once: embedded files never change while the binary runs).
		if v, ok := h.tags.Load(fi.Name() + variant); ok {
			tag = v.(string)
		} else {
			sum := sha256.New()
			if _, err := io.Copy(sum, f); err == nil {
				if _, err := f.Seek(0, io.SeekStart); err == nil {
					tag = base64.RawURLEncoding.EncodeToString(sum.Sum(nil)[:12])
					h.tags.Store(fi.Name()+variant, tag)
				}
			}
		}
	}
	hd.Set("ETag", `"`+tag+"-"+variant+`"`)
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// acceptsGzip reports whether the Accept-Encoding header admits gzip
// (present and not with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			return q > 0
		}
	}
	return false
}

// ContentSecurityPolicy returns the policy sent with the app. page is the
// HTML being served (nil for other files): each inline <script> in it is
// allowed by its SHA-256 hash, so the page needs no 'unsafe-inline' for
// scripts. 'wasm-unsafe-eval' lets the page compile WebAssembly; styles may
// be inline (the UI sets style attributes), images may be data: URLs.
func ContentSecurityPolicy(page []byte) string {
	script := []string{"'self'", "'wasm-unsafe-eval'"}
	for _, s := range InlineScripts(page) {
		sum := sha256.Sum256([]byte(s))
		script = append(script, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return strings.Join([]string{
		"default-src 'self'",
		"script-src " + strings.Join(script, " "),
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data: blob:",
		"connect-src 'self'",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// InlineScripts returns the bodies of the <script> elements in page that
// have no src attribute, exactly as written (that is what a CSP hash covers).
func InlineScripts(page []byte) []string {
	var out []string
	s := string(page)
	for {
		i := indexFold(s, "<script")
		if i < 0 {
			return out
		}
		s = s[i+len("<script"):]
		if s != "" && !isSpace(s[0]) && s[0] != '>' && s[0] != '/' {
			continue // e.g. <scripts>
		}
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return out
		}
		attrs := s[:end]
		s = s[end+1:]
		closeAt := indexFold(s, "</script")
		if closeAt < 0 {
			return out
		}
		body := s[:closeAt]
		s = s[closeAt:]
		if hasSrc(attrs) {
			continue
		}
		out = append(out, body)
	}
}

func hasSrc(attrs string) bool {
	a := asciiLower(attrs)
	for off := 0; ; {
		i := strings.Index(a[off:], "src")
		if i < 0 {
			return false
		}
		i += off
		off = i + 3
		if i > 0 && !isSpace(a[i-1]) {
			continue // data-src, xsrc
		}
		if off == len(a) || isSpace(a[off]) || a[off] == '=' || a[off] == '/' {
			return true
		}
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == '\f' }

// indexFold is strings.Index after ASCII lower-casing s (sub must be lower
// case); byte offsets stay those of s.
func indexFold(s, sub string) int { return strings.Index(asciiLower(s), sub) }

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
