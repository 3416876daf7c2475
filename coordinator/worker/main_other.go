//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// The worker runs only as WebAssembly inside Cloudflare's runtime.
func main() {
	fmt.Fprintln(os.Stderr, "fedcast worker: build it with `make worker` (GOOS=js GOARCH=wasm) and run it under workerd or wrangler; see docs/deploy-cloudflare.md")
	os.Exit(2)
}
