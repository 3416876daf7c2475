// Package web serves the built browser app: the page (index.html), Go's
// wasm_exec.js loader and the compiled client (main.wasm).
//
// # Layout
//
// `make web` writes the app into a directory (bin/web by default):
//
//	index.html     the page; served for /, /join and /admin
//	wasm_exec.js   the Go runtime glue for js/wasm, from $(go env GOROOT)/lib/wasm
//	vugu-render.js vugu's DOM renderer script (see wasm/webbuild for why it is a file)
//	main.wasm      the client (package wasm), GOOS=js GOARCH=wasm
//	main.wasm.gz   the same, gzip -9; served instead when the browser accepts gzip
//
// The join token and the admin token travel in the URL fragment
// (/join#TOKEN, /admin#TOKEN): browsers never send the fragment to the
// server, so the tokens do not show up in access logs or Referer headers.
//
// # Headers
//
// Every answer carries a Content-Security-Policy that allows scripts only from
// this origin plus the inline loader of index.html (by its SHA-256 hash) and
// 'wasm-unsafe-eval' (needed to compile WebAssembly), connections only to
// this origin (fetch and websocket), and no framing. Files are revalidated on
// every load (Cache-Control: no-cache with an ETag), so a rebuilt client is
// picked up at once while an unchanged one costs a 304.
//
// When the directory holds no index.html the handler answers 503 with a
// message that says how to build the app, rather than a bare 404.
//
// # Embedded
//
// HandlerFS serves the same files from an fs.FS: command fedcast embeds
// the app (`make build` overlays bin/web onto its webapp/ directory, which
// in the source tree holds only a placeholder index.html carrying
// PlaceholderMark). A placeholder page is served with status 503. Embedded
// files have no modification time: their ETag is a hash of their content.
package web
