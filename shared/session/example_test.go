package session_test

import (
	"context"
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

func ExampleParseJoinLink() {
	ws, token, err := session.ParseJoinLink("https://flu.example.org/join#k3y")
	fmt.Println(ws, token, err)
	// Output: wss://flu.example.org/api/ws k3y <nil>
}

// A session driven through an in-memory Pipe: the example plays the
// coordinator on the other end, refusing the token.
func Example() {
	ctx := context.Background()
	dial := func(ctx context.Context, url string, protocols []string) (session.Conn, error) {
		// The token travels in the handshake: a real coordinator checks
		// it before it accepts the connection.
		token, err := protocol.ParseAuth(protocols)
		fmt.Printf("coordinator at %s got token %q (%v)\n", url, token, err)
		lha, coord := session.Pipe()
		k, b, _ := protocol.Encode(&protocol.Error{Code: protocol.CodeUnauthorized, Message: "unknown token"})
		coord.Write(ctx, k, b)
		return lha, nil
	}
	_, err := session.Join(ctx, "http://127.0.0.1:8080/join#not-enrolled", "", &session.Options{Dial: dial})
	fmt.Println(err)
	// Output:
	// coordinator at ws://127.0.0.1:8080/api/ws got token "not-enrolled" (<nil>)
	// protocol: coordinator error 3 (unauthorized): unknown token
}
