//go:build js && wasm

package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"syscall/js"

	"github.com/fedcast/fedcast/ui"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"
)

// memoryLimit is the Go heap size at which the collector starts working
// harder than its default pace. A WebAssembly page never returns memory to
// the browser, so the page's footprint is the heap's highest point: reading
// a ten-year file of 500 areas (about 50 MB) let the heap grow to about 155 MB
// (live data about 120 MB at the parse's peak); with this limit it stays
// near 125 MB. Below the limit the collector keeps its usual pace, so
// small files cost no extra time; above it the runtime caps the extra
// collection work at about half the time, so a larger file is read more
// slowly, never refused.
const memoryLimit = 128 << 20

func main() {
	debug.SetMemoryLimit(memoryLimit)
	loc := js.Global().Get("location")
	path := loc.Get("pathname").String()
	fragment := strings.TrimPrefix(loc.Get("hash").String(), "#")

	renderer, err := domrender.New("#app")
	if err != nil {
		fatal(err)
		return
	}
	defer renderer.Release()
	env := renderer.EventEnv()
	ctx := context.Background()

	root := &ui.Root{Page: ui.PageOf(path)}
	switch root.Page {
	case ui.PageJoin:
		root.Join = &ui.JoinState{Env: env, Link: loc.Get("href").String(), Connect: connect, Yield: yield, Fetch: fetch}
		root.Join.Start(ctx)
	case ui.PageAdmin:
		root.Admin = &ui.AdminState{Env: env, Base: loc.Get("origin").String(), Token: fragment, Fetch: fetch, Post: post}
		go root.Admin.Poll(ctx)
	}

	buildEnv, err := vugu.NewBuildEnv(env)
	if err != nil {
		fatal(err)
		return
	}
	for ok := true; ok; ok = renderer.EventWait() {
		env.RLock()
		res := buildEnv.RunBuild(root)
		env.RUnlock()
		if err := renderer.Render(res); err != nil {
			fatal(err)
			return
		}
	}
}

// yield lets the browser run (paint, answer input) while the page is
// visible: it waits for a zero-delay JavaScript timer, which the browser
// fires only after the tasks already queued (a Go time.Sleep did not do
// that reliably: Chromium's Long Tasks API still saw training as one task
// of over a second). A hidden page skips it (nothing to paint, and hidden
// tabs clamp timers to a second or more).
func yield() {
	if js.Global().Get("document").Get("visibilityState").String() != "visible" {
		return
	}
	done := make(chan struct{})
	cb := js.FuncOf(func(js.Value, []js.Value) any {
		close(done)
		return nil
	})
	js.Global().Call("setTimeout", cb, 0)
	<-done
	cb.Release()
}

// fatal shows an error in place of the app.
func fatal(err error) {
	doc := js.Global().Get("document")
	el := doc.Call("getElementById", "boot")
	if !el.Truthy() {
		el = doc.Call("getElementById", "app")
	}
	if el.Truthy() {
		el.Set("textContent", fmt.Sprintf("The fedcast app stopped: %v. Reload the page; if it persists, tell your study coordinator.", err))
		el.Set("className", "boot error")
	}
	js.Global().Get("console").Call("error", "fedcast:", err.Error())
}
