package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestAnswerOnTime: every round_start is answered once, at the same
// moment after it arrived (protocol.AnswerAfter), picked or not; a picked
// LHA whose training overruns that moment sends its dummy on time instead
// of its update late.
func TestAnswerOnTime(t *testing.T) {
	// A longer window than the other pipe tests' answerIn: the moment is
	// checked against the window's end, and a loaded machine (or wasm
	// under node, one thread) may run the answer's timer late by a few
	// hundred milliseconds.
	const answerIn = 2 * time.Second
	st := fakeStudy()
	st.Rounds, st.Layers, st.LocalEpochs = 3, []int{3, 64, 64, 1}, 100000 // seconds of training
	st.Params = nn.NewMLP(st.Layers...).NumParams()
	d := newPipeDialer()
	type answer struct {
		u     *protocol.Update
		after time.Duration
	}
	w := make([]float64, st.Params)
	got := make(chan answer, 3)
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if err := c.awaitReady(); err != nil {
				return err
			}
			for r, picked := range []bool{false, true} {
				sent := time.Now()
				c.send(&protocol.RoundStart{Round: r + 1, TimeLeft: answerIn, Picked: picked, Weights: w})
				k, b, err := c.conn.Read(context.Background(), protocol.FrameSize(st.Params))
				if err != nil {
					return err
				}
				m, err := protocol.Decode(k, b)
				if err != nil {
					return err
				}
				u, ok := m.(*protocol.Update)
				if !ok || u.Round != r+1 {
					return errors.New("the answer is not an update frame of the round")
				}
				got <- answer{u, time.Since(sent)}
				c.send(&protocol.Accepted{})
				c.send(released(st, r+1, w))
			}
			c.send(&protocol.Finished{Rounds: 2, Reason: "rounds", ModelSHA256: protocol.HashHex(w)})
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows()
	var sent []Outgoing
	if err := s.RunWindows(ctx, x, y, Observer{Sent: func(o Outgoing) { sent = append(sent, o) }}); err != nil {
		t.Fatal(err)
	}
	if err := <-serverDone; err != nil {
		t.Fatal(err)
	}
	close(got)
	want := protocol.AnswerAfter(answerIn)
	n := 0
	for a := range got {
		n++
		if !a.u.Dummy || len(a.u.Weights) != st.Params {
			t.Errorf("answer %d: dummy %v with %d weights, want a dummy of %d", n, a.u.Dummy, len(a.u.Weights), st.Params)
		}
		if a.after < want-10*time.Millisecond || a.after > answerIn {
			t.Errorf("answer %d left %v after its round_start, want about %v and before the window's %v", n, a.after, want, answerIn)
		}
	}
	if n != 2 {
		t.Errorf("%d answers, want 2 (one not picked, one picked whose training overran)", n)
	}
	if len(sent) < 2 || sent[len(sent)-1].Type != "dummy" || sent[len(sent)-1].Bytes != int(protocol.HeaderSize)+len(`{"dummy":1}`)+8*st.Params {
		t.Errorf("sent %+v: want the dummy last, of an update's size", sent)
	}
}
