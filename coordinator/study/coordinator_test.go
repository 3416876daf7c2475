package study

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// fakeTransport records what a Coordinator sends, per LHA, in order.
type fakeTransport struct {
	online  map[int]bool
	got     map[int][]protocol.Message
	dropped []int
}

func newFake(n int) *fakeTransport {
	f := &fakeTransport{online: map[int]bool{}, got: map[int][]protocol.Message{}}
	for i := range n {
		f.online[i] = true
	}
	return f
}

func (f *fakeTransport) add(lha int, k protocol.Kind, b []byte) {
	m, err := protocol.Decode(k, b)
	if err != nil {
		panic(err)
	}
	f.got[lha] = append(f.got[lha], m)
}

func (f *fakeTransport) Send(lha int, k protocol.Kind, b []byte) {
	if f.online[lha] {
		f.add(lha, k, b)
	}
}

func (f *fakeTransport) Broadcast(k protocol.Kind, b []byte) {
	for lha, on := range f.online {
		if on {
			f.add(lha, k, b)
		}
	}
}

func (f *fakeTransport) Drop(lha int, reason string) { f.dropped = append(f.dropped, lha) }
func (f *fakeTransport) Online(lha int) bool         { return f.online[lha] }
func (f *fakeTransport) Connected() int {
	n := 0
	for _, on := range f.online {
		if on {
			n++
		}
	}
	return n
}

// take returns and forgets what LHA lha was sent.
func (f *fakeTransport) take(lha int) []protocol.Message {
	m := f.got[lha]
	delete(f.got, lha)
	return m
}

func encodeUpdate(t *testing.T, round int, w []float64) []byte {
	t.Helper()
	_, b, err := protocol.Encode(&protocol.Update{Round: round, Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seededCoordinator is the driver of a small study of 6 LHAs, all
// online, in research mode (seed 5), on a fake transport; t0 is its clock.
func seededCoordinator(t *testing.T) (*File, *Engine, *MemStore, *fakeTransport, *Coordinator, time.Time) {
	t.Helper()
	f, raw, _ := small(t, 6)
	seed := uint64(5)
	store := &MemStore{}
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(6)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return f, e, store, tr, c, t0
}

// TestCoordinatorRound drives one round through the pure API with a fake
// clock: quorum → open (round_start to every LHA, picked or not), frames
// acknowledged at once and answered at the release, the commit in the
// store before the release, and a repeated Tick that sends nothing twice.
func TestCoordinatorRound(t *testing.T) {
	f, e, store, tr, c, t0 := seededCoordinator(t)
	L, slack := time.Duration(f.RoundLength), time.Duration(f.RoundSlack)

	next, err := c.Tick(t0)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(L - slack); !next.At.Equal(want) || next.Finished {
		t.Fatalf("after the opening: next %+v, want the window's close at %v", next, want)
	}
	if st := c.Status(); st.State != protocol.StateRunning || st.Schedule.Round != 1 || !st.Schedule.Start.Equal(t0) {
		t.Fatalf("status after the opening: %+v", st)
	}
	var sampled []int
	e.Current()
	c.WithEngine(func(e *Engine) { sampled = slices.Clone(e.Current().Sampled) })
	if len(sampled) == 0 {
		t.Fatal("seed 5 samples nobody: pick another seed for this test")
	}
	// Every LHA gets the round_start, the same but for its picked digit.
	for lha := range 6 {
		got := tr.take(lha)
		if len(got) != 1 {
			t.Fatalf("LHA %d got %d messages at the opening, want its round_start", lha, len(got))
		}
		if rs, ok := got[0].(*protocol.RoundStart); !ok || rs.Round != 1 || rs.TimeLeft != L-slack || rs.Picked != slices.Contains(sampled, lha) {
			t.Fatalf("LHA %d got %#v, want round_start of round 1 with %v left, picked %v", lha, got[0], L-slack, slices.Contains(sampled, lha))
		}
	}

	// Each frame is acknowledged at once, whatever it holds.
	dim := len(e.Global())
	var acks int
	ack := func(k protocol.Kind, b []byte) {
		if m, err := protocol.Decode(k, b); err != nil || !reflect.DeepEqual(m, &protocol.Accepted{}) {
			t.Fatalf("reply %v %v, want accepted", m, err)
		}
		acks++
	}
	good := make([]float64, dim)
	good[0] = 0.01
	notSampled := slices.IndexFunc([]int{0, 1, 2, 3, 4, 5}, func(i int) bool { return !slices.Contains(sampled, i) })
	c.Frame(sampled[0], encodeUpdate(t, 1, good), t0.Add(time.Second), ack)
	c.Frame(sampled[0], encodeUpdate(t, 1, good), t0.Add(time.Second), ack) // a second frame
	c.Frame(notSampled, encodeUpdate(t, 1, good), t0.Add(time.Second), ack)
	if acks != 3 || c.Buffered() != 2 {
		t.Fatalf("%d acks and %d frames buffered, want 3 and 2", acks, c.Buffered())
	}
	for lha := range 6 {
		if got := tr.take(lha); len(got) != 0 {
			t.Fatalf("LHA %d got %v during the window", lha, got)
		}
	}

	// The close commits round 1 to the store and sends nothing.
	next, err = c.Tick(t0.Add(L - slack))
	if err != nil {
		t.Fatal(err)
	}
	if !next.At.Equal(t0.Add(L)) {
		t.Fatalf("after the close: next %v, want the release at %v", next.At, t0.Add(L))
	}
	if store.S.Rounds() != 1 || store.S.Participation[0].Received != 1 {
		t.Fatalf("store after the close: %d rounds, participation %+v; want round 1 with 1 update", store.S.Rounds(), store.S.Participation)
	}
	if c.Status().Round != 0 {
		t.Fatal("the public status counts round 1 before its release")
	}
	c.Frame(sampled[0], encodeUpdate(t, 1, good), t0.Add(L-slack/2), ack) // late: no window
	for lha := range 6 {
		if got := tr.take(lha); len(got) != 0 {
			t.Fatalf("LHA %d got %v between the close and the release", lha, got)
		}
	}

	// The release: verdicts, then the result to all; round 2 opens.
	if _, err := c.Tick(t0.Add(L)); err != nil {
		t.Fatal(err)
	}
	want := store.S.Events[0]
	for lha := range 6 {
		got := tr.take(lha)
		var codes []protocol.Code
		var res *protocol.RoundResult
		for _, m := range got {
			switch m := m.(type) {
			case *protocol.Error:
				if res != nil {
					t.Fatalf("LHA %d: verdict after the round_result", lha)
				}
				codes = append(codes, m.Code)
			case *protocol.RoundResult:
				res = m
			}
		}
		if res == nil || res.Event.ModelSHA256 != want.ModelSHA256 || res.Event.Round != 1 {
			t.Fatalf("LHA %d: round_result %+v, want round 1 %s", lha, res, want.ModelSHA256)
		}
		var wantCodes []protocol.Code
		switch lha {
		case sampled[0]:
			wantCodes = []protocol.Code{protocol.CodeDuplicateUpdate, protocol.CodeStaleRound}
		case notSampled:
			// An update from an LHA not picked is not summed and, like a
			// dummy, not answered: answers do not depend on who was picked.
		}
		if !slices.Equal(codes, wantCodes) {
			t.Errorf("LHA %d: verdicts %v, want %v", lha, codes, wantCodes)
		}
	}
	if c.Status().Round != 1 {
		t.Fatalf("status after the release: round %d", c.Status().Round)
	}
	// A repeated tick (an alarm that fires twice) sends nothing again.
	if _, err := c.Tick(t0.Add(L)); err != nil {
		t.Fatal(err)
	}
	for lha := range 6 {
		for _, m := range tr.take(lha) {
			if _, ok := m.(*protocol.RoundStart); !ok {
				t.Fatalf("LHA %d got %T on a repeated tick", lha, m)
			}
		}
	}
	if store.S.Rounds() != 1 {
		t.Fatalf("%d rounds stored after a repeated tick", store.S.Rounds())
	}
}

// runTo drives a coordinator with nobody sending until k rounds are
// committed, ticking at the times it asks for; it returns the time of the
// next tick.
func runTo(t *testing.T, c *Coordinator, at time.Time, k int) time.Time {
	t.Helper()
	for range 100 {
		rounds, _ := c.Progress()
		if rounds >= k {
			return at
		}
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		if next.Finished {
			t.Fatalf("finished after %d rounds", rounds)
		}
		if !next.At.IsZero() {
			at = next.At
		}
	}
	t.Fatal("no progress")
	return at
}

// TestStateRoundTrip: the committed state survives MarshalBinary and
// UnmarshalBinary unchanged, and a research study resumed from the bytes
// (a Durable Object's restart) continues exactly as one that never
// stopped: same events, same models bit for bit.
func TestStateRoundTrip(t *testing.T) {
	f, raw, _ := small(t, 6)
	seed := uint64(9)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	open := func(s *MemStore) *Coordinator {
		e, err := Open(f, raw, s, &Options{InsecureSeed: &seed, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewCoordinator(e, DriverOptions{Transport: newFake(6)}, t0)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	whole := &MemStore{}
	runTo(t, open(whole), t0, 4)

	first := &MemStore{}
	at := runTo(t, open(first), t0, 2)
	b, err := first.S.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, first.S) {
		t.Fatalf("state changed in a round trip (%d bytes)", len(b))
	}
	if err := new(State).UnmarshalBinary([]byte(`{"version": 7}`)); err == nil {
		t.Error("a state of another version was read")
	}
	runTo(t, open(&MemStore{S: &back}), at, 4)
	if !reflect.DeepEqual(back.Events, whole.S.Events) || !slices.Equal(back.Model, whole.S.Model) {
		t.Fatalf("resumed study differs from the uninterrupted one:\n%v\n%v", back.Events, whole.S.Events)
	}
}

// TestStoreIdempotent: a repeated commit of a stored round is a no-op, a
// different model for it or a gap is refused.
func TestStoreIdempotent(t *testing.T) {
	s := &MemStore{}
	if err := s.Init(&Genesis{Model: []float64{0, 0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Init(&Genesis{Model: []float64{0, 0}}); !errors.Is(err, ErrStoreExists) {
		t.Fatalf("second Init: %v", err)
	}
	c1 := &Commit{Event: protocol.Event{Round: 1}, Model: []float64{1, 2}}
	if err := s.Commit(c1); err != nil {
		t.Fatal(err)
	}
	n := s.Changes
	if err := s.Commit(c1); err != nil || s.Changes != n {
		t.Fatalf("repeated commit: %v, changes %d → %d", err, n, s.Changes)
	}
	if err := s.Commit(&Commit{Event: protocol.Event{Round: 1}, Model: []float64{1, 3}}); !errors.Is(err, ErrStoreOutOfOrder) {
		t.Fatalf("round 1 with another model: %v", err)
	}
	if err := s.Commit(&Commit{Event: protocol.Event{Round: 3}, Model: []float64{1, 3}}); !errors.Is(err, ErrStoreOutOfOrder) {
		t.Fatalf("round 3 after round 1: %v", err)
	}
	s.Finish(ReasonRounds, time.Unix(0, 0))
	s.Finish(ReasonBudget, time.Unix(1, 0))
	if s.S.Finished != ReasonRounds {
		t.Fatalf("second Finish replaced the first: %q", s.S.Finished)
	}
}

// TestCommitEndsTheCall: an alarm that comes late (after the release was
// due) commits the round and returns without releasing it; the release
// moves to the next slot start (the schedule-and-slack rule: a commit that
// ends after its slot moves the release, it never makes it depend on when
// the commit ended within a slot) and comes from a later call, so a
// driver that persists its store after each call has the round durable
// before anyone sees it.
func TestCommitEndsTheCall(t *testing.T) {
	f, raw, _ := small(t, 6)
	seed := uint64(3)
	store := &MemStore{}
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(6)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tick(t0); err != nil {
		t.Fatal(err)
	}
	for lha := range 6 {
		tr.take(lha)
	}
	late := t0.Add(time.Duration(f.RoundLength) + time.Second)
	next, err := c.Tick(late)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(2 * time.Duration(f.RoundLength)); store.S.Rounds() != 1 || !next.At.Equal(want) {
		t.Fatalf("late tick: %d rounds stored, next %v (want 1 and the release at the next slot start %v)", store.S.Rounds(), next.At, want)
	}
	for lha := range 6 {
		if got := tr.take(lha); len(got) != 0 {
			t.Fatalf("LHA %d got %d messages in the call that committed", lha, len(got))
		}
	}
	if _, err := c.Tick(late); err != nil { // early: nothing due
		t.Fatal(err)
	}
	for lha := range 6 {
		if got := tr.take(lha); len(got) != 0 {
			t.Fatalf("LHA %d got %d messages before the release", lha, len(got))
		}
	}
	if _, err := c.Tick(next.At); err != nil {
		t.Fatal(err)
	}
	for lha := range 6 {
		got := tr.take(lha)
		if len(got) == 0 {
			t.Fatalf("LHA %d got nothing at the release", lha)
		}
		if _, ok := got[0].(*protocol.RoundResult); !ok {
			t.Fatalf("LHA %d got %T first, want the round_result", lha, got[0])
		}
	}
}

// TestCoordinatorWaitsForReady: an LHA whose connection joined (every
// connection starts not ready) and has not said ready does not count towards the start quorum and
// gets no round_start; once it says ready the quorum is reached, and a
// repeated ready changes nothing.
func TestCoordinatorWaitsForReady(t *testing.T) {
	f, raw, _ := small(t, 2)
	seed := uint64(5)
	e, err := Open(f, raw, &MemStore{}, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(2)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Join(1, t0, func([]Msg) {}); err != nil {
		t.Fatal(err)
	}
	if got := c.Counts(); got != (Counts{Online: 2, Ready: 1}) {
		t.Fatalf("counts %+v, want 2 online, 1 ready", got)
	}
	for _, at := range []time.Duration{0, time.Minute, time.Hour} {
		if _, err := c.Tick(t0.Add(at)); err != nil {
			t.Fatal(err)
		}
		if st := c.Status(); st.State != protocol.StateWaiting {
			t.Fatalf("after %v with one of two LHAs ready: state %q, want waiting", at, st.State)
		}
	}
	var replies []protocol.Kind
	if !c.Ready(1, t0.Add(time.Hour), func(k protocol.Kind, b []byte) { replies = append(replies, k) }) {
		t.Fatal("Ready of a waiting LHA returned false")
	}
	if len(replies) != 0 {
		t.Fatalf("ready before any round got %d replies", len(replies))
	}
	if c.Ready(1, t0.Add(time.Hour), func(protocol.Kind, []byte) {}) {
		t.Fatal("a repeated ready returned true")
	}
	if _, err := c.Tick(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); st.State != protocol.StateRunning || !st.Schedule.Start.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after both LHAs are ready: state %q, schedule %+v; want the schedule to start then", st.State, st.Schedule)
	}
}

func TestIsReady(t *testing.T) {
	_, ready, _ := protocol.Encode(&protocol.Ready{})
	_, hello, _ := protocol.Encode(&protocol.Hello{Token: "x"})
	if !IsReady(ready) || IsReady(hello) || IsReady([]byte("ready")) {
		t.Fatal("IsReady: want true for a ready frame only")
	}
}
