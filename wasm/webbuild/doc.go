// Package webbuild builds the browser app into a directory that
// coordinator/web serves. `make web` and the browser tests both use it, so
// the two cannot drift apart.
//
// # What a build writes
//
//	index.html      copied from the module root
//	wasm_exec.js    Go's js/wasm glue, from $(go env GOROOT)/lib/wasm
//	vugu-render.js  vugu's DOM renderer script (see below)
//	main.wasm       GOOS=js GOARCH=wasm go build -trimpath -ldflags=-s ./wasm
//	main.wasm.gz    the same, gzip level 9
//
// # Why vugu-render.js
//
// vugu v0.4.0's renderer installs its JavaScript half with window.eval. The
// page's Content-Security-Policy has no 'unsafe-eval', so the build writes
// that same script (the jsHelperScript constant of vugu's domrender
// package, read from the module cache with go/parser) to a file the page
// loads with <script src>. The script guards itself with
// "if (window.vuguRender) return", so once it has run, the eval call is a
// no-op; index.html replaces window.eval with a function that does just that
// and refuses any other use. Nothing of vugu is copied into this repository:
// the file is produced from the pinned module at build time.
package webbuild
