package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestSessionSaysReady: Join sends nothing but the handshake (the LHA
// has no checked file yet, and every connection starts not ready), Run's
// first message is ready, and a redial during Run says ready again right
// after its welcome.
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
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			m, err := read(c.conn)
			if err != nil {
				return err
			}
			if _, ok := m.(*protocol.Ready); !ok {
				return errors.New("the first message after the welcome is not ready")
			}
			c.conn.Close(CloseAbort, "")
			c = coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if m, err = read(c.conn); err != nil {
				return err
			}
			if _, ok := m.(*protocol.Ready); !ok {
				return errors.New("the redial during Run does not say ready")
			}
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
	if sent := s.TakeSent(); len(sent) != 1 || sent[0].Type != "hello" {
		t.Fatalf("Join sent %+v, want the handshake (hello) only", sent)
	}
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
}
