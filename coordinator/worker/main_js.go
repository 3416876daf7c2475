//go:build js && wasm

package main

import (
	"errors"
	"runtime/debug"
	"syscall/js"
	"time"

	"github.com/syumai/workers"
)

// main hands the http.Handler to syumai/workers, exports the Durable
// Object's call (binding.call) next to syumai's binding.handleRequest, and
// stays alive: the Durable Object keeps this instance (and the study's
// engine in it) for as long as it runs.
//
//	binding.call(op, conn, nowMillis, binary, data, origin, host, addr)
//	    → Uint8Array (the effects envelope)
//	    | string "refused: …" (connect refused: HTTP 403)
//	    | string "too many: …" (connect from an address past its limit
//	      of failed attempts: HTTP 429)
//	    | Error (returned, not thrown) on any other failure
func main() {
	// An isolate has 128 MB for the JavaScript heap and this program's
	// linear memory together, and linear memory never shrinks: collect
	// harder as the heap nears 80 MiB rather than let it grow to twice the
	// live heap (an open round's buffered updates are most of it).
	debug.SetMemoryLimit(80 << 20)
	h := &handler{}
	workers.ServeNonBlock(h)
	js.Global().Get("context").Get("binding").Set("call", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 7 {
			return js.Global().Get("Error").New("fedcast: call wants 7 arguments")
		}
		r := Request{Op: args[0].String(), Conn: args[1].Int(), Now: time.UnixMilli(int64(args[2].Float())),
			Binary: args[3].Truthy(), Origin: args[5].String(), Host: args[6].String()}
		if len(args) > 7 && args[7].Truthy() {
			r.Addr = args[7].String()
		}
		if d := args[4]; d.Truthy() {
			r.Data = make([]byte, d.Get("byteLength").Int())
			js.CopyBytesToGo(r.Data, d)
		}
		out, err := h.Do(r)
		switch {
		case errors.Is(err, ErrRefused), errors.Is(err, ErrTooMany):
			return err.Error()
		case err != nil:
			return js.Global().Get("Error").New(err.Error())
		}
		ua := js.Global().Get("Uint8Array").New(len(out))
		js.CopyBytesToJS(ua, out)
		return ua
	}))
	workers.Ready()
	select {}
}
