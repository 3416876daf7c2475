//go:build js && wasm

package main

import (
	"context"
	"errors"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
)

// connect joins the study behind link (wasm/client adapter).
func connect(ctx context.Context, link string) (ui.Session, *protocol.Welcome, error) {
	return nil, nil, errors.New("wasm: the coordinator session (wasm/client) is not built into this app yet")
}
