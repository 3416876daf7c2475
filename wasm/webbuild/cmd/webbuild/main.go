// Command webbuild builds the fedcast browser app (see package webbuild):
//
//	go run ./wasm/webbuild/cmd/webbuild -o bin/web
//	go run ./wasm/webbuild/cmd/webbuild -o bin/web -overlay bin/overlay.json
//
// The second form writes the overlay with which `make build` embeds the
// app in the fedcast binary.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/fedcast/fedcast/wasm/webbuild"
)

func main() {
	out := flag.String("o", "bin/web", "output directory")
	noGzip := flag.Bool("no-gzip", false, "do not write main.wasm.gz")
	goCmd := flag.String("go", "go", "the go command")
	overlay := flag.String("overlay", "", "only write this `go build -overlay` file, which puts the app built in -o into -embed")
	embedDir := flag.String("embed", "coordinator/cmd/fedcast/webapp", "the embedded app directory of the fedcast command (with -overlay)")
	flag.Parse()
	if *overlay != "" {
		if err := webbuild.WriteOverlay(*overlay, *out, *embedDir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	res, err := webbuild.Build(context.Background(), webbuild.Options{Out: *out, NoGzip: *noGzip, Go: *goCmd})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("webbuild: %s: main.wasm %d bytes", res.Dir, res.WasmSize)
	if res.GzipSize > 0 {
		fmt.Printf(", gzip %d bytes", res.GzipSize)
	}
	fmt.Println()
}
