//go:build js && wasm

package main

import "github.com/syumai/workers"

// main hands the handler to syumai/workers and stays alive: the Durable
// Object keeps this instance (and the study's engine in it) for as long
// as it runs, and calls the handler once per event.
func main() {
	workers.ServeNonBlock(&handler{})
	workers.Ready()
	select {}
}
