package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
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
	st.Rounds, st.Layers, st.Hidden, st.LocalEpochs = 3, []int{3, 64, 64, 1}, []int{64, 64}, 100000 // seconds of training
	st.Params = nn.NewMLP(st.Layers...).NumParams()
	d := newPipeDialer()
	got, serverDone := answerRounds(t, d, st, answerIn, []bool{false, true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows()
	var sent []Outgoing
	// Each step's progress report takes 20 ms, so the picked LHA's
	// training overruns the answer moment however fast the kernels are
	// (the vector kernels train the 100000 epochs in under a second);
	// once the dummy has left, training finishes unreported, at full speed.
	slow := func(round, step, steps int) { time.Sleep(20 * time.Millisecond) }
	if err := s.RunWindows(ctx, x, y, Observer{Sent: func(o Outgoing) { sent = append(sent, o) }, Progress: slow}); err != nil {
		t.Fatal(err)
	}
	if err := <-serverDone; err != nil {
		t.Fatal(err)
	}
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

// TestPresentOnly is issue 23's "ready depends only on a file having been
// chosen and parsed": an LHA whose file gives no window for the study (4
// days, H=3 needs at least 9 with the centred average) is ready like any
// other, and, picked in every round, answers every round with a dummy of
// an update's size at protocol.AnswerAfter; it never trains and never
// sends a real update.
func TestPresentOnly(t *testing.T) {
	const answerIn = 600 * time.Millisecond
	st := fakeStudy()
	st.Rounds = 3
	short := &series.Dataset{Regions: []*series.Region{{Name: "Kreis A", Start: time.Date(2022, 5, 1, 0, 0, 0, 0, time.UTC), Cases: []float64{3, 4, 5, 6}}}}
	if _, err := PrepareTraining(st, short, 0, nil); !Unusable(err) {
		t.Fatalf("the short file's error %v is not Unusable", err)
	}
	d := newPipeDialer()
	got, serverDone := answerRounds(t, d, st, answerIn, []bool{true, true, true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	var sent []Outgoing
	var states []State
	steps, accepted := 0, 0
	obs := Observer{Sent: func(o Outgoing) { sent = append(sent, o) }, State: func(x State) { states = append(states, x) },
		Progress: func(int, int, int) { steps++ }, Accepted: func(int) { accepted++ }}
	if err := s.Run(ctx, short, obs); err != nil {
		t.Fatalf("Run with an unusable file: %v, want it to take part present only", err)
	}
	if err := <-serverDone; err != nil {
		t.Fatalf("coordinator side: %v", err)
	}
	n := 0
	for a := range got {
		n++
		if !a.u.Dummy || len(a.u.Weights) != st.Params {
			t.Errorf("round %d: dummy %v with %d weights, want a dummy of %d", a.u.Round, a.u.Dummy, len(a.u.Weights), st.Params)
		}
		for _, v := range a.u.Weights {
			if v != 0 {
				t.Errorf("round %d: the dummy carries %v", a.u.Round, a.u.Weights)
				break
			}
		}
		if want := protocol.AnswerAfter(answerIn); a.after < want-10*time.Millisecond || a.after > answerIn {
			t.Errorf("round %d: answered %v after its round_start, want about %v", a.u.Round, a.after, want)
		}
	}
	if n != st.Rounds {
		t.Errorf("%d answers, want one per round (%d)", n, st.Rounds)
	}
	types := map[string]int{}
	for _, o := range sent {
		types[o.Type]++
	}
	if types["ready"] != 1 || types["dummy"] != st.Rounds || types["update"] != 0 {
		t.Errorf("sent %v, want ready once and %d dummies, no update", types, st.Rounds)
	}
	for _, x := range states {
		if x == StateTraining || x == StateSampled || x == StateSent {
			t.Errorf("state %q reported: a present-only LHA trains nothing (states %v)", x, states)
		}
	}
	if steps != 0 || accepted != 0 {
		t.Errorf("%d training steps and %d counted updates, want none", steps, accepted)
	}
}

// TestUnusable: errors about what a file holds are Unusable (the LHA takes
// part present only); errors of the study, the public inputs file or the
// context are not.
func TestUnusable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("%w: region %q has 4 days", series.ErrTooShort, "A"), true},
		{&series.CoverageError{Region: "A"}, true},
		{ErrNoData, true},
		{fmt.Errorf("%w: the area %q", forecast.ErrAreaNotPublic, "05315"), true},
		{fmt.Errorf("%w: layers", ErrBadStudy), false},
		{fmt.Errorf("%w: horizon 0", series.ErrOption), false},
		{ErrNoPublic, false},
		{fmt.Errorf("%w: sha256", protocol.ErrPublicInput), false},
		{fmt.Errorf("%w x.csv: line 3", forecast.ErrPublicFile), false},
		{context.Canceled, false},
		{errors.Join(context.DeadlineExceeded), false},
	} {
		if got := Unusable(tc.err); got != tc.want {
			t.Errorf("Unusable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// timedAnswer is one round's answer as the coordinator read it: the
// update and how long after its round_start it came.
type timedAnswer struct {
	u     *protocol.Update
	after time.Duration
}

// answerRounds plays the coordinator over d: the welcome of st, the
// session's ready, then one round per entry of picked (a round_start with
// answerIn left, the answer read and checked to be an update frame of the
// round of an update's size, acknowledged, the round released from zero
// weights), then the end of the study. The answers come on the first
// channel (closed before the error is sent), and nil or what went wrong
// on the second.
func answerRounds(t *testing.T, d *pipeDialer, st protocol.Study, answerIn time.Duration, picked []bool) (<-chan timedAnswer, <-chan error) {
	got := make(chan timedAnswer, len(picked))
	done := make(chan error, 1)
	go func() {
		c := coordinator{t, <-d.ends}
		err := func() error {
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting})
			if err := c.awaitReady(); err != nil {
				return fmt.Errorf("not counted ready: %w", err)
			}
			w := make([]float64, st.Params)
			for i, p := range picked {
				r, sent := i+1, time.Now()
				c.send(&protocol.RoundStart{Round: r, TimeLeft: answerIn, Picked: p, Weights: w})
				k, b, err := c.conn.Read(context.Background(), protocol.FrameSize(st.Params))
				if err != nil {
					return err
				}
				m, err := protocol.Decode(k, b)
				if err != nil {
					return err
				}
				// A real update of the round has this size (the dummy
				// flag is one digit either way).
				_, real, err := protocol.Encode(&protocol.Update{Round: r, Weights: w})
				if err != nil {
					return err
				}
				u, ok := m.(*protocol.Update)
				if !ok || u.Round != r || len(b) != len(real) {
					return fmt.Errorf("round %d: answered %T of %d bytes, want an update frame of the round of %d", r, m, len(b), len(real))
				}
				got <- timedAnswer{u, time.Since(sent)}
				c.send(&protocol.Accepted{})
				c.send(released(st, r, w))
			}
			c.send(&protocol.Finished{Rounds: len(picked), Reason: "rounds", ModelSHA256: protocol.HashHex(w)})
			return nil
		}()
		close(got)
		c.conn.Close(CloseNormal, "") // a failed check ends Run too
		done <- err
	}()
	return got, done
}
