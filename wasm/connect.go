//go:build js && wasm

package main

import (
	"github.com/fedcast/fedcast/ui"
	"github.com/fedcast/fedcast/wasm/client"
)

// connect joins the study behind the page's join link with wasm/client
// (coder/websocket over the browser's WebSocket).
var connect = ui.DialClient(&client.Options{Yield: yield})
