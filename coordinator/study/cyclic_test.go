package study

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// cyclicFile is a cyclic study of n LHAs × rounds rounds under privacy p.
func cyclicFile(t *testing.T, n, rounds int, p protocol.StrategyParams) (*File, []byte) {
	t.Helper()
	p.Strategy = string(fl.Cyclic)
	eps := 3.0
	if p.Privacy == "example" {
		eps = 0 // no client-level budget
	}
	f, _, err := Create(CreateOptions{Names: names(n), Template: File{
		StrategyParams: p,
		Settings: protocol.Settings{Name: "cyclic", Epsilon: eps, Rounds: rounds, ExpectedClients: n, History: 4, Horizon: 2,
			Hidden: []int{4}, LocalEpochs: 2, LearningRate: 0.01,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw
}

// cyclicRun drives a cyclic study over a fake transport and clock. Every
// LHA whose turn it is answers with update(k) unless miss[k].
type cyclicRun struct {
	t      *testing.T
	f      *File
	store  *MemStore
	e      *Engine
	c      *Coordinator
	tr     *fakeTransport
	now    time.Time
	update func(k int, dim int) []float64
}

func newCyclicRun(t *testing.T, f *File, raw []byte, store *MemStore, seed uint64, now time.Time) *cyclicRun {
	t.Helper()
	e, err := Open(f, raw, store, &Options{InsecureSeed: &seed, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tr := newFake(len(f.LHAs))
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, now)
	if err != nil {
		t.Fatal(err)
	}
	return &cyclicRun{t: t, f: f, store: store, e: e, c: c, tr: tr, now: now,
		update: func(k, dim int) []float64 {
			d := make([]float64, dim)
			for i := range d {
				d[i] = 0.01 * float64((k*7+i)%5-2)
			}
			return d
		}}
}

func (r *cyclicRun) tick() Next {
	r.t.Helper()
	n, err := r.c.Tick(r.now)
	if err != nil {
		r.t.Fatal(err)
	}
	return n
}

// turn runs the open turn k to its commit: the LHA of the timetable, and
// only it, got round_start k; it answers unless missed. It returns the
// LHA and the committed event; nothing is released before the next tick.
func (r *cyclicRun) turn(k int, missed bool) (int, protocol.Event) {
	t := r.t
	t.Helper()
	_, _, lha, _ := r.e.Turn(k)
	for i := range r.f.LHAs {
		got := r.tr.take(i)
		var starts []*protocol.RoundStart
		for _, m := range got {
			if rs, ok := m.(*protocol.RoundStart); ok {
				starts = append(starts, rs)
			}
		}
		if (i == lha) != (len(starts) == 1) || (len(starts) == 1 && starts[0].Round != k) {
			t.Fatalf("turn %d is LHA %d's; LHA %d got round_start %v", k, lha, i, starts)
		}
		if i == lha && !slices.Equal(starts[0].Weights, r.e.Global()) {
			t.Fatalf("turn %d: round_start does not carry the current model", k)
		}
	}
	if st := r.c.Status(); st.Schedule.Round != k || st.Turn == nil || st.Turn.LHA != r.f.LHAs[lha].Name || st.Turn.Round != (k-1)/len(r.f.LHAs)+1 {
		t.Fatalf("status during turn %d: schedule %+v, turn %+v; want LHA %s", k, st.Schedule, st.Turn, r.f.LHAs[lha].Name)
	}
	if !missed {
		r.c.Frame(lha, encodeUpdate(t, k, r.update(k, len(r.e.Global()))), r.now, func(protocol.Kind, []byte) {})
	}
	before := r.store.S.Rounds()
	r.now = r.tick().At // the window's close
	r.tick()
	if r.store.S.Rounds() != before+1 {
		t.Fatalf("turn %d not committed at its close", k)
	}
	// Committed, not released: nobody got anything yet.
	for i := range r.f.LHAs {
		if got := r.tr.take(i); len(got) != 0 {
			t.Fatalf("turn %d: LHA %d got %v between the commit and the release", k, i, got)
		}
	}
	return lha, r.store.S.Events[k-1]
}

// release moves to the slot's end: the turn's result goes to everyone,
// the next turn opens.
func (r *cyclicRun) release() {
	r.t.Helper()
	r.now = r.c.next
	r.tick()
}

// TestCyclicLiveStudy: a cyclic study of 4 LHAs × 3 rounds through the
// pure Coordinator with a fake transport and clock. Each turn goes to the
// LHA of the public timetable (fl.CyclicOrder of the study file's hash),
// and only to it; the hand-off is committed before it is released; a
// missed turn hands the model on unchanged with c = 0 and no change to
// anyone's ε; each LHA's account holds only its own hand-offs; the study's
// ε is the largest of them.
func TestCyclicLiveStudy(t *testing.T) {
	const n, rounds, missedTurn = 4, 3, 6
	f, raw := cyclicFile(t, n, rounds, protocol.StrategyParams{})
	r := newCyclicRun(t, f, raw, &MemStore{}, 7, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	if r.e.Study.SampleRate != 1 || r.e.Study.Strategy != "cyclic" || r.e.Turns() != n*rounds {
		t.Fatalf("study q=%v strategy %q turns %d", r.e.Study.SampleRate, r.e.Study.Strategy, r.e.Turns())
	}
	c := r.e.Study.NoiseMultiplier
	own := make([]int, n)
	r.tick() // quorum: turn 1 opens
	for k := 1; k <= n*rounds; k++ {
		prev := protocol.HashHex(r.e.Global())
		lha, ev := r.turn(k, k == missedTurn)
		if k == missedTurn {
			if ev.NoiseMultiplier != 0 || ev.ModelSHA256 != prev || ev.Epsilon != privacyOf(t, f, own[lha], c) {
				t.Fatalf("missed turn %d: event %+v, want c=0, the previous model %s and LHA %d's ε unchanged", k, ev, prev, lha)
			}
		} else {
			own[lha]++
			if ev.NoiseMultiplier != c || ev.SampleRate != 1 || ev.ModelSHA256 == prev {
				t.Fatalf("turn %d: event %+v, want c=%v, q=1 and a new model", k, ev, c)
			}
			if want := privacyOf(t, f, own[lha], c); math.Abs(ev.Epsilon-want) > 1e-12 {
				t.Fatalf("turn %d: LHA %d's ε %v, want its own %d hand-offs' %v", k, lha, ev.Epsilon, own[lha], want)
			}
		}
		r.release()
		for i := range n {
			var res *protocol.RoundResult
			for _, m := range r.tr.got[i] {
				if x, ok := m.(*protocol.RoundResult); ok {
					res = x
				}
			}
			if res == nil || res.Event != ev || !slices.Equal(res.Weights, r.store.S.Model) {
				t.Fatalf("turn %d: LHA %d got result %+v, want the committed event %+v", k, i, res, ev)
			}
			// Every result but the last names the next turn (turns beyond
			// T = 3 included: the study has T·N of them).
			if next := res.Schedule; k < n*rounds && (next == nil || next.Round != k+1 || next.Opens == nil) ||
				k == n*rounds && next != nil && next.Opens != nil {
				t.Fatalf("turn %d: the result's schedule %+v, want turn %d next", k, next, k+1)
			}
		}
	}
	if r.e.Finished() != ReasonRounds {
		t.Fatalf("after %d turns: finished %q", n*rounds, r.e.Finished())
	}
	r.now = r.c.next
	r.tick() // the end is announced
	if st := r.c.Status(); st.State != protocol.StateFinished || st.Round != n*rounds || st.Rounds != n*rounds || st.Turn != nil {
		t.Fatalf("final status: %+v", st)
	}
	maxEps := 0.0
	for i := range n {
		if got, want := r.e.LHAHandOffs(i), own[i]; got != want {
			t.Errorf("LHA %d's account holds %d hand-offs, it made %d", i, got, want)
		}
		maxEps = max(maxEps, r.e.LHAEpsilon(i))
	}
	if r.e.EpsilonSpent() != maxEps || !(maxEps <= f.Epsilon) {
		t.Errorf("study ε %v, want the largest LHA ε %v ≤ %v", r.e.EpsilonSpent(), maxEps, f.Epsilon)
	}
	// The missed turn's LHA made T−1 hand-offs, the others T.
	_, _, missedLHA, _ := r.e.Turn(missedTurn)
	if own[missedLHA] != rounds-1 || r.e.LHAEpsilon(missedLHA) >= maxEps {
		t.Errorf("LHA %d missed a turn: %d hand-offs, ε %v (max %v)", missedLHA, own[missedLHA], r.e.LHAEpsilon(missedLHA), maxEps)
	}
	// The order of each round is the public permutation.
	for round := 1; round <= rounds; round++ {
		order := fl.CyclicOrder(r.e.seed, round, n)
		for pos := range n {
			if _, _, lha, _ := r.e.Turn((round-1)*n + pos + 1); lha != order[pos] {
				t.Fatalf("round %d position %d: LHA %d, the public order says %d", round, pos, lha, order[pos])
			}
		}
	}
}

// privacyOf is the ε of turns hand-offs at c with q = 1 (0 for none).
func privacyOf(t *testing.T, f *File, turns int, c float64) float64 {
	t.Helper()
	if turns == 0 {
		return 0
	}
	eps, err := privacy.EpsilonFor(f.AccountantKind(), []privacy.Event{{SampleRate: 1, NoiseMultiplier: c, Rounds: turns}}, f.Delta)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// TestCyclicResume: the state after some turns round-trips through its
// bytes; a restart while a turn is open abandons that turn only (nothing
// of it is in the store), the accounts are recomposed from the events,
// and the study resumes with the same turn, which is then committed once.
func TestCyclicResume(t *testing.T) {
	const n, rounds = 4, 3
	f, raw := cyclicFile(t, n, rounds, protocol.StrategyParams{})
	store := &MemStore{}
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	r := newCyclicRun(t, f, raw, store, 9, t0)
	r.tick()
	for k := 1; k <= 5; k++ {
		r.turn(k, k == 3)
		r.release()
	}
	// Turn 6 is open; its LHA sends its update; the process stops.
	_, _, lha6, _ := r.e.Turn(6)
	r.c.Frame(lha6, encodeUpdate(t, 6, r.update(6, len(r.e.Global()))), r.now, func(protocol.Kind, []byte) {})
	r.c.Stop()
	b, err := store.S.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back State
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if back.Rounds() != 5 || strings.Contains(string(b), `"round":6`) {
		t.Fatalf("stored state after the stop holds %d turns (want 5, nothing of the open turn 6)", back.Rounds())
	}
	store2 := &MemStore{S: &back}
	r2 := newCyclicRun(t, f, raw, store2, 9, r.now.Add(time.Second))
	if r2.e.Rounds() != 5 || !slices.Equal(r2.e.Global(), r.store.S.Model) || r2.e.EpsilonSpent() != r.e.EpsilonSpent() {
		t.Fatalf("resumed: %d turns, ε %v; want 5 and %v", r2.e.Rounds(), r2.e.EpsilonSpent(), r.e.EpsilonSpent())
	}
	for i := range n {
		if r2.e.LHAHandOffs(i) != r.e.LHAHandOffs(i) || r2.e.LHAEpsilon(i) != r.e.LHAEpsilon(i) {
			t.Fatalf("LHA %d's account after the restart: %d hand-offs ε %v, before %d ε %v", i,
				r2.e.LHAHandOffs(i), r2.e.LHAEpsilon(i), r.e.LHAHandOffs(i), r.e.LHAEpsilon(i))
		}
	}
	// Everyone is online: the study resumes at the next slot with turn 6.
	next := r2.tick()
	r2.now = next.At
	r2.tick()
	if cur := r2.e.Current(); cur == nil || cur.ID != 6 || !slices.Equal(cur.Sampled, []int{lha6}) {
		t.Fatalf("after the restart the open turn is %+v, want turn 6 of LHA %d", cur, lha6)
	}
	r2.turn(6, false)
	r2.release()
	if store2.S.Rounds() != 6 {
		t.Fatalf("%d turns committed after the restart, want 6", store2.S.Rounds())
	}
	// A state whose turn claims another c is refused.
	bad := store2.S.Clone()
	bad.Events[0].NoiseMultiplier *= 2
	if _, err := Open(f, raw, &MemStore{S: bad}, nil); err == nil {
		t.Fatal("a stored turn with another c was accepted")
	}
}

// TestCyclicExamplePrivacy: under privacy "example" the hand-off is the
// model the LHA trained, exactly (no re-clipping, no noise), and the
// events carry guarantee "example" with no client-level ε.
func TestCyclicExamplePrivacy(t *testing.T) {
	f, raw := cyclicFile(t, 3, 2, protocol.StrategyParams{Privacy: "example", ExampleEpsilon: 2})
	r := newCyclicRun(t, f, raw, &MemStore{}, 3, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	r.update = func(k, dim int) []float64 { // far above S: nothing is re-clipped
		d := make([]float64, dim)
		for i := range d {
			d[i] = 10
		}
		return d
	}
	r.tick()
	for k := 1; k <= 6; k++ {
		want := slices.Clone(r.e.Global())
		for i := range want {
			want[i] += 10
		}
		_, ev := r.turn(k, false)
		if ev.Guarantee != "example" || ev.Epsilon != 0 || ev.NoiseMultiplier != 0 || !slices.Equal(r.store.S.Model, want) {
			t.Fatalf("turn %d: event %+v; model handed on differs from the trained one", k, ev)
		}
		r.release()
	}
	if r.e.EpsilonSpent() != 0 || r.e.Finished() != ReasonRounds {
		t.Fatalf("ε %v, finished %q", r.e.EpsilonSpent(), r.e.Finished())
	}
}

// TestCyclicFile: the study file takes strategy "cyclic" with m = N only.
func TestCyclicFile(t *testing.T) {
	f, raw := cyclicFile(t, 4, 3, protocol.StrategyParams{Privacy: "both", ExampleEpsilon: 4})
	if _, err := Parse(raw); err != nil {
		t.Fatalf("a cyclic file does not parse: %v", err)
	}
	f.ExpectedClients = 2
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "expected_clients") {
		t.Fatalf("cyclic with m < N: %v", err)
	}
	f.ExpectedClients, f.Lambda = 4, 1
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "lambda") {
		t.Fatalf("cyclic with λ: %v", err)
	}
}

// TestCyclicLedgerResume: serve's SQLite ledger keeps a cyclic study's
// turns (hand-offs and a missed turn, whose model is the previous one)
// such that Open rebuilds the same public log and the same accounts.
func TestCyclicLedgerResume(t *testing.T) {
	f, raw := cyclicFile(t, 4, 2, protocol.StrategyParams{})
	l := openLedger(t, filepath.Join(t.TempDir(), "ledger.db"))
	e, err := Open(f, raw, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	dim := len(e.Global())
	for k := 1; k <= 5; k++ {
		r, err := e.BeginAt(time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if k != 3 {
			d := make([]float64, dim)
			d[k%dim] = 0.05
			if err := e.Submit(r.Sampled[0], k, d); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Complete(); err != nil {
			t.Fatal(err)
		}
		if err := e.Release(); err != nil {
			t.Fatal(err)
		}
	}
	e2, err := Open(f, raw, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e2.Events(), e.Events()) || !slices.Equal(e2.Global(), e.Global()) || e2.EpsilonSpent() != e.EpsilonSpent() {
		t.Fatalf("reopened from the ledger:\n%+v\nwant\n%+v", e2.Events(), e.Events())
	}
	for i := range 4 {
		if e2.LHAHandOffs(i) != e.LHAHandOffs(i) || e2.LHAEpsilon(i) != e.LHAEpsilon(i) {
			t.Fatalf("LHA %d's account differs after reopening", i)
		}
	}
	if ev := e.Events()[2]; ev.NoiseMultiplier != 0 || ev.ModelSHA256 != e.Events()[1].ModelSHA256 {
		t.Fatalf("missed turn 3: %+v", ev)
	}
}
