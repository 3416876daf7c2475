package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// FuzzServerFrame feeds arbitrary frames into a live coordinator over a
// real websocket, from an authenticated LHA while round 1 is open, and
// checks that the coordinator answers every frame (the fixed acknowledgement
// of a binary frame, an error, or a closed socket), never panics, and that
// neither the budget nor the ledger moves: round 1's slot is a day long,
// so it is never released while the fuzzer runs.
//
//	go test -run=NONE -fuzz=FuzzServerFrame -fuzztime=5m ./coordinator/server/
func FuzzServerFrame(f *testing.F) {
	fx := start(f, study.File{StartQuorum: 1,
		Settings: protocol.Settings{Name: "fuzz", Epsilon: 10, Rounds: 3, ExpectedClients: 2, Hidden: []int{4},
			LocalEpochs: 1, RoundLength: study.Duration(24 * time.Hour)}}, lhaNames(2), nil)
	var panics atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				panics.Add(1)
				panic(v)
			}
		}()
		fx.srv.ServeHTTP(w, r)
	}))
	f.Cleanup(hs.Close)
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/api/ws"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	honest, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protocol.Subprotocols(fx.secrets.LHAs[0])})
	cancel()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { honest.CloseNow() })
	_, ready, _ := protocol.Encode(&protocol.Ready{})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	err = honest.Write(ctx, websocket.MessageText, ready) // counts for the quorum from now on
	cancel()
	if err != nil {
		f.Fatal(err)
	}
	// Wait until round 1 has started with the honest LHA online (its
	// round_start arrives). Otherwise a fuzzed connection's ready could be
	// handled first, round 1 would open with the honest LHA offline (a
	// dropout), and a fuzzed valid update would complete it.
	for started := false; !started; {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		typ, m, err := honest.Read(ctx)
		cancel()
		if err != nil {
			f.Fatalf("waiting for round 1 to start: %v", err)
		}
		k := protocol.Text
		if typ == websocket.MessageBinary {
			k = protocol.Binary
		}
		if msg, err := protocol.Decode(k, m); err == nil && msg.Type() == protocol.TypeRoundStart {
			started = true
		}
	}
	go func() { // drain, never answer
		for {
			if _, _, err := honest.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	dim := fx.eng.Study.Params
	for _, m := range []protocol.Message{
		&protocol.Update{Round: 1, Weights: make([]float64, dim)},
		&protocol.Update{Round: 2, Weights: make([]float64, dim)},
		&protocol.Update{Round: 1, Weights: make([]float64, dim+1)},
		&protocol.Hello{Token: "x"},
		&protocol.Accepted{Round: 1},
		&protocol.Error{Code: protocol.CodeInternal, Message: "x"},
	} {
		k, b, err := protocol.Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(k), b)
	}
	f.Add(uint8(protocol.Text), []byte(`{"v":1,"type":"update","rows":3}`))
	f.Add(uint8(protocol.Binary), []byte("fc\x01\x04"))

	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		if kind%2 != 0 && study.IsReady(b) {
			t.Skip("a ready frame has no answer (TestReadyFrame covers it)")
		}
		// Generous: the machine is shared; a hang still fails.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: protocol.Subprotocols(fx.secrets.LHAs[1])})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		typ := websocket.MessageText
		if kind%2 == 0 {
			typ = websocket.MessageBinary
		}
		if err := ws.Write(ctx, typ, b); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("writing a %d-byte frame did not finish within 60 s", len(b))
			}
			return // the coordinator closed the socket first (e.g. over the read limit)
		}
		answer := ""
		for answer == "" {
			typ, m, err := ws.Read(ctx)
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("no answer to a %d-byte frame within 60 s", len(b))
				}
				answer = fmt.Sprint("closed ", websocket.CloseStatus(err))
				break
			}
			k := protocol.Text
			if typ == websocket.MessageBinary {
				k = protocol.Binary
			}
			msg, err := protocol.Decode(k, m)
			if err != nil {
				t.Fatalf("the coordinator sent an undecodable frame: %v", err)
			}
			switch msg.Type() {
			case protocol.TypeWelcome, protocol.TypeRoundStart, protocol.TypeRoundResult:
			default:
				answer = msg.Type().String()
			}
		}
		st := fx.srv.PublicStatus()
		if st.Round != 0 || st.EpsilonSpent != 0 || panics.Load() != 0 {
			t.Fatalf("after a fuzzed frame (%s): status %+v, %d panics", answer, st, panics.Load())
		}
		if rs, err := fx.srv.ledger.Rounds(); err != nil || len(rs) != 0 {
			t.Fatalf("ledger: %d rounds, %v", len(rs), err)
		}
	})
}
