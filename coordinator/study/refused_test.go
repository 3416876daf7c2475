package study

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// driven is a research study of n LHAs (small) on a MemStore, driven by a
// Coordinator over a fake transport from t0.
type driven struct {
	f     *File
	raw   []byte
	seed  uint64
	store *MemStore
	e     *Engine
	c     *Coordinator
	tr    *fakeTransport
	t0    time.Time
}

func newDriven(t *testing.T, n int, seed uint64, opt DriverOptions) *driven {
	t.Helper()
	d := &driven{seed: seed, store: &MemStore{}, tr: newFake(n), t0: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	d.f, d.raw, _ = small(t, n)
	d.e, d.c = d.open(t, opt, d.t0)
	return d
}

// open opens the study on the store (again, for a restart) and a
// coordinator of it with opt at now (the fake transport unless opt names
// one).
func (d *driven) open(t *testing.T, opt DriverOptions, now time.Time) (*Engine, *Coordinator) {
	t.Helper()
	e, err := Open(d.f, d.raw, d.store, &Options{InsecureSeed: &d.seed})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Transport == nil {
		opt.Transport = d.tr
	}
	c, err := NewCoordinator(e, opt, now)
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

// withWeight0 returns an update frame of round with weight 0 set to v and
// a matching weight hash (so that only the value is wrong).
func withWeight0(t *testing.T, round, dim int, v float64) []byte {
	t.Helper()
	b := encodeUpdate(t, round, make([]float64, dim))
	off := len(b) - 8*dim // the weights follow the header and the update's metadata
	binary.LittleEndian.PutUint64(b[off:], math.Float64bits(v))
	sum := sha256.Sum256(b[off:])
	copy(b[16:48], sum[:])
	return b
}

// TestRefusedUpdatesCounted: every refused update of a sampled LHA counts
// as rejected in the round's participation record, whether the engine
// refused it (wrong length) or decoding did (NaN, +Inf, a frame shorter
// than its header says), and each answer names the round.
func TestRefusedUpdatesCounted(t *testing.T) {
	const seed = 3
	d := newDriven(t, 10, seed, DriverOptions{})
	f, e, c, store, tr, t0 := d.f, d.e, d.c, d.store, d.tr, d.t0
	if _, err := c.Tick(t0); err != nil {
		t.Fatal(err)
	}
	var sampled []int
	c.WithEngine(func(e *Engine) { sampled = slices.Clone(e.Current().Sampled) })
	if len(sampled) < 5 {
		t.Fatalf("seed %d samples %d LHAs, this test needs 5: pick another seed", seed, len(sampled))
	}
	dim := len(e.Global())
	good := encodeUpdate(t, 1, make([]float64, dim))
	bad := map[int][]byte{
		sampled[0]: withWeight0(t, 1, dim, math.NaN()),
		sampled[1]: withWeight0(t, 1, dim, math.Inf(1)),
		sampled[2]: encodeUpdate(t, 1, make([]float64, dim-1)), // wrong length (engine)
		sampled[3]: good[:len(good)-8],                         // shorter than its header says (decoding)
		sampled[4]: good,
	}
	at := t0.Add(time.Second)
	for _, lha := range sampled[:5] {
		c.Frame(lha, bad[lha], at, func(protocol.Kind, []byte) {})
	}
	L, slack := time.Duration(f.RoundLength), time.Duration(f.RoundSlack)
	if _, err := c.Tick(t0.Add(L - slack)); err != nil {
		t.Fatal(err)
	}
	if p := store.S.Participation[0]; p.Round != 1 || p.Received != 1 || p.Rejected != 4 {
		t.Errorf("participation %+v: want round 1 with 1 received and 4 rejected", p)
	}
	if _, err := c.Tick(t0.Add(L)); err != nil {
		t.Fatal(err)
	}
	for i, lha := range sampled[:4] {
		var ev *protocol.Error
		for _, m := range tr.take(lha) {
			if m, ok := m.(*protocol.Error); ok {
				ev = m
			}
		}
		if ev == nil || ev.Round != 1 || !strings.Contains(ev.Message, "round 1") {
			t.Errorf("refused update %d (LHA %d): answer %+v, want an error naming round 1", i, lha, ev)
		}
		if i == 0 && (ev == nil || ev.Code != protocol.CodeBadUpdate || !strings.Contains(ev.Message, "NaN")) {
			t.Errorf("NaN update: answer %+v, want bad_update naming the NaN", ev)
		}
	}
}
