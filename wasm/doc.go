// Command wasm is the browser entry point of fedcast (GOOS=js GOARCH=wasm):
// it reads the page's URL (/join#TOKEN or /admin#TOKEN), builds the ui
// package's Root component and runs vugu's render loop. The LHA session
// itself is package wasm/client, the same code as `fedcast client`.
//
// Build it with `make web` (see package wasm/webbuild); the coordinator
// serves the result (coordinator/web).
package main
