package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestSlowFrameDoesNotStallOthers checks the bound on frames in flight
// with a single slot: an idle connection holds no slot (another LHA's
// update goes through while it idles); a sender that stalls in the middle
// of a frame holds the slot for at most the frame read timeout, is then
// disconnected, and the update queued behind it is accepted.
func TestSlowFrameDoesNotStallOthers(t *testing.T) {
	const timeout = 2 * time.Second
	// The paper's model: a 94 KiB update, far more than the client's
	// 4 KiB write buffer.
	f := start(t, study.File{Settings: protocol.Settings{Name: "slots", Epsilon: 10, Rounds: 3, ExpectedClients: 3, LocalEpochs: 1,
		RoundLength: study.Duration(8 * time.Second), RoundSlack: study.Duration(time.Second)}}, lhaNames(3), nil, func(o *Options) {
		o.FramesInFlight = 1
		o.FrameReadTimeout = timeout
	})
	slow, honest, idle := readyRaw(t, f, f.secrets.LHAs[0]), readyRaw(t, f, f.secrets.LHAs[1]), readyRaw(t, f, f.secrets.LHAs[2])
	var dim int
	for _, c := range []*raw{slow, honest, idle} {
		dim = len(expect[*protocol.RoundStart](c).Weights) // q = 1: all sampled
	}
	_, update, err := protocol.Encode(&protocol.Update{Round: 1, Weights: make([]float64, dim)})
	if err != nil {
		t.Fatal(err)
	}

	// The slow LHA starts a fragmented message and never finishes it: a
	// non-final frame carrying most of the update (the client flushes all
	// but its last buffer of it).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := slow.ws.Writer(ctx, websocket.MessageBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(update[:len(update)-1]); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); len(f.srv.slots) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the slow frame's header never took the slot")
		}
	}
	honest.write(protocol.Binary, update)
	time.Sleep(timeout / 4)
	if n := f.srv.buffered(); n != 0 {
		t.Fatalf("%d frames read while the only slot was held by a stalled frame", n)
	}
	expect[*protocol.Accepted](honest)
	expectClosed(slow)
	idle.write(protocol.Binary, update)
	expect[*protocol.Accepted](idle)
	// The stalled LHA is a dropout: round 1 commits with the other two.
	if res := expect[*protocol.RoundResult](honest); res.Event.Round != 1 {
		t.Fatalf("round_result for round %d, want 1", res.Event.Round)
	}
	parts, err := f.srv.ledger.Participation()
	if err != nil || len(parts) == 0 || parts[0].Received != 2 {
		t.Errorf("round 1 participation %+v (%v), want 2 updates received", parts, err)
	}
	code, body := get(t, f.http.URL+"/metrics", f.secrets.Admin)
	if code != 200 || !strings.Contains(string(body), "\nfedcast_frames_timed_out_total 1\n") {
		t.Errorf("metrics (%d) do not count the one timed-out frame", code)
	}
	if n := slotsTaken(f.srv); n != 0 {
		t.Errorf("%d slots still taken after every frame was handled", n)
	}
}

// TestFrameSizeBoundary checks the read buffer's sizing against the read
// limit: a frame of exactly the limit is read and answered, one byte more
// closes the socket with 1009.
func TestFrameSizeBoundary(t *testing.T) {
	f := hostile(t)
	limit := protocol.FrameSize(f.eng.Study.Params)
	c := readyRaw(t, f, f.secrets.LHAs[1])
	expect[*protocol.Welcome](c)
	inWindow(c)
	c.write(protocol.Binary, make([]byte, limit))
	expectCode(c, protocol.CodeBadFrame) // read whole, answered at the release

	c = readyRaw(t, f, f.secrets.LHAs[1])
	expect[*protocol.Welcome](c)
	c.write(protocol.Text, make([]byte, limit+1))
	if st := expectClosed(c); st != websocket.StatusMessageTooBig {
		t.Errorf("frame of limit+1 bytes: close status %v, want 1009", st)
	}
	if n := slotsTaken(f.srv); n != 0 {
		t.Errorf("%d slots still taken", n)
	}
}

// buffered returns the number of frames buffered in the open window.
func (s *Server) buffered() int { return s.co.Buffered() }

// slotsTaken returns the number of frame slots in use once the server's
// connection goroutines have settled: a client can see its socket closed
// an instant before the goroutine that closed it has released its slot, so
// it waits (up to 5 s) for the count to reach zero.
func slotsTaken(s *Server) int {
	deadline := time.Now().Add(5 * time.Second)
	for len(s.slots) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return len(s.slots)
}
