package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestForecastVisit: a forecast-only visit (protocol.ForecastOnly, as
// client --forecast dials) with the join token of a connected, ready LHA
// gets the welcome and a normal close; the live connection keeps its
// place, gets nothing (no "replaced"), and stays online and ready. A
// visit with a bad token counts towards the address's failed attempts.
func TestForecastVisit(t *testing.T) {
	f := start(t, study.File{Settings: protocol.Settings{Name: "visit", Epsilon: 10, Rounds: 3, ExpectedClients: 2, Hidden: []int{4},
		LocalEpochs: 1, RoundLength: study.Duration(time.Hour)}}, lhaNames(2), nil, func(o *Options) {
		o.MaxFailedAuth = 1
	})
	live := readyRaw(t, f, f.secrets.LHAs[0])
	expect[*protocol.Welcome](live)
	want := study.Counts{Online: 1, Ready: 1}
	for deadline := time.Now().Add(5 * time.Second); f.srv.co.Counts() != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("counts %+v, want %+v", f.srv.co.Counts(), want)
		}
	}
	f.srv.mu.Lock()
	registered := f.srv.conns[0]
	f.srv.mu.Unlock()

	v := dialProtos(t, f, protocol.ForecastSubprotocols(f.secrets.LHAs[0]))
	if w := expect[*protocol.Welcome](v); w.LHA != f.eng.File.LHAs[0].Name {
		t.Errorf("the visit was welcomed as %q", w.LHA)
	}
	if st := expectClosed(v); st != websocket.StatusNormalClosure {
		t.Errorf("the visit closed with %v, want a normal close", st)
	}
	f.srv.mu.Lock()
	kept := f.srv.conns[0] == registered
	f.srv.mu.Unlock()
	if !kept || f.srv.co.Counts() != want {
		t.Errorf("after the visit: connection kept %v, counts %+v, want %+v", kept, f.srv.co.Counts(), want)
	}
	// The live connection still works and was told nothing in between:
	// the next frame it reads is the answer to its own.
	live.write(protocol.Binary, []byte("fc"))
	expect[*protocol.Accepted](live)

	bad := dialProtos(t, f, protocol.ForecastSubprotocols("not-a-token"))
	expectCode(bad, protocol.CodeUnauthorized)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	_, resp, err := websocket.Dial(ctx2, f.wsURL(), &websocket.DialOptions{Subprotocols: protocol.ForecastSubprotocols("not-a-token")})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second bad visit with a limit of 1: %v, %v; want HTTP 429", resp, err)
	}
}
