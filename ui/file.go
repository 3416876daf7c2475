package ui

import (
	"errors"

	"github.com/vugu/vugu/js"
)

// readJSFile reads a browser File object into memory. It blocks until the
// browser has read it, so call it from a goroutine, never from an event
// handler (the handler runs inside a JavaScript callback, which must not
// wait for a promise). The bytes are copied into Go 4 MiB at a time, with
// yield (when not nil) in between, so a large file does not hold up the
// page in one piece.
func readJSFile(file js.Value, yield func()) ([]byte, error) {
	if !file.Truthy() {
		return nil, errors.New("ui: no file")
	}
	buf, err := await(file.Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	arr := js.Global().Get("Uint8Array").New(buf)
	data := make([]byte, arr.Get("length").Int())
	const chunk = 4 << 20
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		js.CopyBytesToGo(data[off:end], arr.Call("subarray", off, end))
		if yield != nil && end < len(data) {
			yield()
		}
	}
	return data, nil
}

// await waits for a JavaScript promise.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(this js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		ch <- result{v: v}
		return nil
	})
	defer ok.Release()
	fail := js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "ui: the browser could not read the file"
		if len(args) > 0 && args[0].Truthy() {
			msg += ": " + args[0].Call("toString").String()
		}
		ch <- result{err: errors.New(msg)}
		return nil
	})
	defer fail.Release()
	p.Call("then", ok, fail)
	r := <-ch
	return r.v, r.err
}
