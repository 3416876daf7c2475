package ui

import (
	"errors"
	"io"

	"github.com/vugu/vugu/js"
)

// fileChunk is how many bytes of a chosen file the browser hands over at a
// time. Reading the whole File as one ArrayBuffer kept a second copy of a
// 50 MB file alive in the browser while Go held its own, which pushed a
// ten-year file of 500 areas past the page's 500 MB budget.
const fileChunk = 4 << 20

// openJSFile returns a reader over a browser File and its size in bytes.
// The reader asks the browser for one slice of fileChunk bytes at a time
// (Blob.slice, then arrayBuffer) and copies into Go only what each Read
// asks for, so at most one chunk is held twice. Read blocks until the
// browser has read the slice: use the reader from a goroutine.
func openJSFile(file js.Value) (io.Reader, int, error) {
	if !file.Truthy() {
		return nil, 0, errors.New("ui: no file")
	}
	return &jsFileReader{file: file, n: file.Get("size").Int()}, file.Get("size").Int(), nil
}

// jsFileReader reads a JavaScript File chunk by chunk.
type jsFileReader struct {
	file     js.Value
	n, off   int      // the file's size and the next byte to read
	chunk    js.Value // the current chunk (a Uint8Array) or undefined
	from, to int      // the file offsets the chunk covers
}

func (r *jsFileReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		r.chunk = js.Undefined() // let the browser free it
		return 0, io.EOF
	}
	if r.off >= r.to {
		r.chunk = js.Undefined()
		end := min(r.off+fileChunk, r.n)
		buf, err := await(r.file.Call("slice", r.off, end).Call("arrayBuffer"))
		if err != nil {
			return 0, err
		}
		r.chunk = js.Global().Get("Uint8Array").New(buf)
		r.from, r.to = r.off, r.off+r.chunk.Get("length").Int()
		if r.to == r.from {
			return 0, io.ErrUnexpectedEOF // the file shrank while it was read
		}
	}
	end := min(r.off+len(p), r.to)
	k := js.CopyBytesToGo(p, r.chunk.Call("subarray", r.off-r.from, end-r.from))
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
