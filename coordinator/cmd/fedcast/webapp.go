package main

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/fedcast/fedcast/coordinator/web"
)

// The browser app is embedded in this command (and only here: no library
// package embeds it, so nothing else, such as a Workers bundle, carries
// it). The committed webapp/ directory holds only a placeholder page, so
// that the module builds, vets and tests on a fresh clone; `make build`
// compiles the command with a -overlay that puts the files of bin/web
// (index.html, wasm_exec.js, vugu-render.js, main.wasm, main.wasm.gz) in
// its place (see wasm/webbuild.WriteOverlay).
//
//go:embed all:webapp
var embedded embed.FS

// embeddedApp is the app built into this binary (possibly the placeholder).
func embeddedApp() fs.FS {
	sub, err := fs.Sub(embedded, "webapp")
	if err != nil {
		panic(err) // the directory is part of the source
	}
	return sub
}

// webHandler serves the browser app: from dir when --web was given, else
// the embedded app. A binary built without the app (go build, go run)
// falls back to bin/web under the working directory when that holds a
// built app, and otherwise serves the placeholder page; both are said on
// out at start-up.
func webHandler(dir string, out io.Writer) http.Handler {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
			fmt.Fprintf(out, "  WARNING: --web %s holds no index.html: the join page will say the app is not built\n", dir)
		}
		return web.Handler(dir)
	}
	app := embeddedApp()
	if !web.IsPlaceholder(app) {
		return web.HandlerFS(app, "this fedcast binary")
	}
	if !web.IsPlaceholder(os.DirFS(web.DefaultDir)) {
		fmt.Fprintf(out, "  note: this fedcast binary has no browser app built in; serving the one in %s (make build embeds it)\n", web.DefaultDir)
		return web.Handler(web.DefaultDir)
	}
	fmt.Fprintln(out, "  WARNING: this fedcast binary has no browser app built in (build it with `make build`, or pass --web DIR): the join page and the dashboard will say so")
	return web.HandlerFS(app, "this fedcast binary")
}
