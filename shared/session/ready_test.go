package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestSessionSaysReady: the hello of Join says "wait" (no checked file
// yet), Run's first message is ready, and a redial during Run is ready at
// its hello (no wait).
func TestSessionSaysReady(t *testing.T) {
	st := fakeStudy()
	d := newPipeDialer()
	done := make(chan error, 1)
	read := func(c Conn) (protocol.Message, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		k, b, err := c.Read(ctx, protocol.MaxText)
		if err != nil {
			return nil, err
		}
		return protocol.Decode(k, b)
	}
	go func() {
		done <- func() error {
			c := coordinator{t, <-d.ends}
			m, err := read(c.conn)
			if h, ok := m.(*protocol.Hello); err != nil || !ok || !h.Wait {
				return errors.New("the hello before Run does not say wait")
			}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if m, err = read(c.conn); err != nil {
				return err
			}
			if _, ok := m.(*protocol.Ready); !ok {
				return errors.New("Run's first message is not ready")
			}
			c.conn.Close(CloseAbort, "")
			c = coordinator{t, <-d.ends}
			m, err = read(c.conn)
			if h, ok := m.(*protocol.Hello); err != nil || !ok || h.Wait {
				return errors.New("the redial's hello during Run says wait")
			}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			c.send(&protocol.Finished{Reason: "rounds"})
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
}
