package server

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestNoCompression: the upgrade declines permessage-deflate even when the
// client offers it (browsers always do): a dummy's zeros would otherwise
// shrink on the wire and tell an observer who was picked.
func TestNoCompression(t *testing.T) {
	f := hostile(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, f.wsURL(), &websocket.DialOptions{
		Subprotocols: protocol.Subprotocols(f.secrets.LHAs[0]), CompressionMode: websocket.CompressionContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Errorf("the coordinator negotiated %q: frames would be compressed", ext)
	}
}
