//go:build js && wasm

package main

import (
	"context"
	"errors"
	"syscall/js"
)

// fetch GETs url (with a bearer token unless token is "") through the browser's fetch API
// (net/http would add about 1.3 MB gzip to the app for this one call).
func fetch(ctx context.Context, url, token string) (int, []byte, error) {
	return request(ctx, "GET", url, token)
}

// post is fetch with the POST method and no body.
func post(ctx context.Context, url, token string) (int, []byte, error) {
	return request(ctx, "POST", url, token)
}

func request(ctx context.Context, method, url, token string) (int, []byte, error) {
	headers := js.Global().Get("Headers").New()
	if token != "" {
		headers.Call("set", "Authorization", "Bearer "+token)
	}
	opts := js.Global().Get("Object").New()
	opts.Set("method", method)
	opts.Set("headers", headers)
	opts.Set("cache", "no-store")
	opts.Set("credentials", "omit")
	abort := js.Global().Get("AbortController").New()
	opts.Set("signal", abort.Get("signal"))
	stop := context.AfterFunc(ctx, func() { abort.Call("abort") })
	defer stop()

	resp, err := await(js.Global().Call("fetch", url, opts))
	if err != nil {
		return 0, nil, err
	}
	status := resp.Get("status").Int()
	buf, err := await(resp.Call("arrayBuffer"))
	if err != nil {
		return status, nil, err
	}
	arr := js.Global().Get("Uint8Array").New(buf)
	body := make([]byte, arr.Get("length").Int())
	js.CopyBytesToGo(body, arr)
	return status, body, nil
}

// await waits for a promise; it must not be called from a JavaScript
// callback (event handler), only from a goroutine.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(this js.Value, args []js.Value) any {
		ch <- result{v: args[0]}
		return nil
	})
	defer ok.Release()
	fail := js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "request failed"
		if len(args) > 0 && args[0].Truthy() {
			msg = args[0].Call("toString").String()
		}
		ch <- result{err: errors.New("wasm: " + msg)}
		return nil
	})
	defer fail.Release()
	p.Call("then", ok, fail)
	r := <-ch
	return r.v, r.err
}
