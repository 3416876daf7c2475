package study

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestDummiesNotSummed: every LHA answers round 1 with a dummy (picked
// or not); none is summed, none is answered, and the round's model is
// the one of a round nobody answered (same insecure seed: same noise).
// A dummy for another round is stale, answered as a stale update is;
// the window keeps only a dummy's head.
func TestDummiesNotSummed(t *testing.T) {
	run := func(answer bool) (model string, received int, codes map[int][]protocol.Code) {
		f, e, store, tr, c, t0 := seededCoordinator(t)
		L, slack := time.Duration(f.RoundLength), time.Duration(f.RoundSlack)
		if _, err := c.Tick(t0); err != nil {
			t.Fatal(err)
		}
		dim := len(e.Global())
		if answer {
			for lha := range 6 {
				round := 1
				if lha == 5 {
					round = 7
				}
				_, b, err := protocol.Encode(&protocol.Update{Round: round, Dummy: true, Weights: make([]float64, dim)})
				if err != nil {
					t.Fatal(err)
				}
				c.Frame(lha, b, t0.Add(time.Second), func(protocol.Kind, []byte) {})
			}
			for lha, b := range c.window.frames {
				if len(b) != protocol.DummyHead {
					t.Errorf("LHA %d's dummy: %d bytes kept, want its %d-byte head", lha, len(b), protocol.DummyHead)
				}
			}
		}
		for lha := range 6 {
			tr.take(lha)
		}
		if _, err := c.Tick(t0.Add(L - slack)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Tick(t0.Add(L)); err != nil {
			t.Fatal(err)
		}
		codes = map[int][]protocol.Code{}
		for lha := range 6 {
			for _, m := range tr.take(lha) {
				if e, ok := m.(*protocol.Error); ok {
					codes[lha] = append(codes[lha], e.Code)
				}
			}
		}
		return store.S.Events[0].ModelSHA256, store.S.Participation[0].Received, codes
	}
	model, received, codes := run(true)
	silent, _, _ := run(false)
	if received != 0 || model != silent {
		t.Errorf("dummies: %d received, model %s; want 0 and the model of a round nobody answered, %s", received, model, silent)
	}
	if len(codes) != 1 || len(codes[5]) != 1 || codes[5][0] != protocol.CodeStaleRound {
		t.Errorf("answers %v, want only stale_round to LHA 5's dummy for round 7", codes)
	}
}
