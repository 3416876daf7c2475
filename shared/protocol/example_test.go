package protocol_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
)

func Example() {
	kind, b, err := protocol.Encode(&protocol.Update{Round: 4, Weights: []float64{0.25, -0.5}})
	if err != nil {
		panic(err)
	}
	fmt.Println(kind, len(b), "bytes")
	m, err := protocol.Decode(kind, b)
	if err != nil {
		panic(err)
	}
	u := m.(*protocol.Update)
	fmt.Println(u.Type(), u.Round, u.Weights)

	_, b, _ = protocol.Encode(&protocol.Hello{Token: "secret"})
	fmt.Println(string(b))
	// Output:
	// binary 75 bytes
	// update 4 [0.25 -0.5]
	// {"v":1,"type":"hello","token":"secret"}
}
