package ui

import (
	"errors"
	"io"

	"github.com/vugu/vugu/js"
)

// openJSFile asks the browser for a File's bytes and returns a reader over
// them and their number. The reader copies into Go only what each Read
// asks for, so a large file is held once (by the browser), not twice. It
// blocks until the browser has read the file: call it from a goroutine.
func openJSFile(file js.Value) (io.Reader, int, error) {
	if !file.Truthy() {
		return nil, 0, errors.New("ui: no file")
	}
	buf, err := await(file.Call("arrayBuffer"))
	if err != nil {
		return nil, 0, err
	}
	arr := js.Global().Get("Uint8Array").New(buf)
	n := arr.Get("length").Int()
	return &jsBytesReader{arr: arr, n: n}, n, nil
}

// jsBytesReader reads a JavaScript Uint8Array.
type jsBytesReader struct {
	arr    js.Value
	off, n int
}

func (r *jsBytesReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		r.arr = js.Null() // let the browser free it
		return 0, io.EOF
	}
	end := min(r.off+len(p), r.n)
	k := js.CopyBytesToGo(p, r.arr.Call("subarray", r.off, end))
	r.off += k
	return k, nil
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
