package server

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
	"github.com/fedcast/fedcast/shared/session"
)

// secureStudy starts a helper (nil key: none listening) and a coordinator
// of n LHAs whose study names it; edit, if set, changes the study first.
func secureStudy(t *testing.T, n, rounds int, up bool, edit ...func(*study.File)) (*fixture, string) {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	h, err := helper.New(key, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.Handler())
	t.Cleanup(func() { hs.Close(); h.Close() })
	if !up {
		hs.Close()
	}
	tmpl := study.File{Helper: &study.HelperRef{URL: hs.URL, PublicKey: key.PublicKey().Bytes(), Operator: "Helper e.V."},
		Settings: protocol.Settings{Name: "secure", Epsilon: 4, Rounds: rounds, ExpectedClients: n / 2, Hidden: []int{8},
			LocalEpochs: 5, RoundLength: study.Duration(1500 * time.Millisecond)}}
	for _, e := range edit {
		e(&tmpl)
	}
	f := start(t, tmpl, lhaNames(n), nil)
	return f, state
}

// runLHAs runs n headless LHAs on synthetic data until ctx ends or the
// study finishes, and returns each one's sent messages and errors.
func runLHAs(t *testing.T, f *fixture, n int, ctx context.Context) ([][]session.Outgoing, []*protocol.Error, []error) {
	t.Helper()
	var mu sync.Mutex
	sent := make([][]session.Outgoing, n)
	var refusals []*protocol.Error
	errs := startLHAs(t, ctx, f, n, 3, func(i int) session.Observer {
		return session.Observer{
			Sent: func(o session.Outgoing) { mu.Lock(); sent[i] = append(sent[i], o); mu.Unlock() },
			Error: func(e *protocol.Error) {
				mu.Lock()
				refusals = append(refusals, e)
				mu.Unlock()
			},
		}
	}).wait()
	return sent, refusals, errs
}

// runLHAsClean is runLHAs that fails the test on any LHA's error or
// refusal, and returns what each LHA sent.
func runLHAsClean(t *testing.T, f *fixture, n int, ctx context.Context) [][]session.Outgoing {
	t.Helper()
	sent, refusals, errs := runLHAs(t, f, n, ctx)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("LHA %d: %v", i, err)
		}
	}
	if len(refusals) != 0 {
		t.Fatalf("refusals: %+v", refusals[0])
	}
	return sent
}

// TestSecureEndToEnd: a study with a helper runs to the end over real
// websockets and a real helper; every LHA sends one report of the same
// size every round; the leader's ledger marks each round as secure
// aggregation with both ε, and the helper's ledger holds the same rounds.
func TestSecureEndToEnd(t *testing.T) {
	const n, rounds = 4, 3
	f, helperState := secureStudy(t, n, rounds, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sent := runLHAsClean(t, f, n, ctx)
	want := protocol.HeaderSize + secagg.ReportSize(f.eng.Study.Params)
	for i, s := range sent {
		reports := 0
		for _, o := range s {
			switch o.Type {
			case "hello", "ready":
			case "report":
				reports++
				if o.Bytes != want {
					t.Errorf("LHA %d: a report of %d bytes, want %d", i, o.Bytes, want)
				}
			default:
				t.Errorf("LHA %d sent a %s", i, o.Type)
			}
		}
		if reports != rounds {
			t.Errorf("LHA %d sent %d reports in %d rounds", i, reports, rounds)
		}
	}
	exp, err := f.srv.ledger.Export(context.Background())
	if err != nil || len(exp.Rounds) != rounds {
		t.Fatalf("leader ledger: %v, %d rounds", err, len(exp.Rounds))
	}
	for _, r := range exp.Rounds {
		if !r.SecureAggregation || r.EpsilonPublic == nil || !(*r.EpsilonPublic < r.Epsilon) {
			t.Fatalf("leader ledger round %+v", r)
		}
	}
	if st := f.srv.PublicStatus(); !st.SecureAggregation || !(st.EpsilonPublic > 0 && st.EpsilonPublic < st.EpsilonSpent) {
		t.Errorf("public status: secure %v, ε %v, public ε %v", st.SecureAggregation, st.EpsilonSpent, st.EpsilonPublic)
	}
	he, err := helper.ExportLedger(helperState, "")
	if err != nil || len(he.Rounds) != rounds {
		t.Fatalf("helper ledger: %v, %+v", err, he)
	}
	for i, r := range he.Rounds {
		if r.Epsilon != exp.Rounds[i].Epsilon || r.Reports != n {
			t.Errorf("round %d: helper ε %v with %d reports, leader ε %v", i+1, r.Epsilon, r.Reports, exp.Rounds[i].Epsilon)
		}
	}
}

// TestSecureMRMTLWithDPSGD: MR-MTL with local DP-SGD (privacy both) runs
// with a helper over real websockets: the LHAs send their steps as
// reports, and both ledgers hold every round.
func TestSecureMRMTLWithDPSGD(t *testing.T) {
	const n, rounds = 4, 2
	f, helperState := secureStudy(t, n, rounds, true, func(s *study.File) {
		s.Strategy, s.Lambda, s.Privacy, s.ExampleEpsilon = "mrmtl", 1, "both", 8
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runLHAsClean(t, f, n, ctx)
	exp, err := f.srv.ledger.Export(context.Background())
	if err != nil || len(exp.Rounds) != rounds || !exp.Rounds[0].SecureAggregation {
		t.Fatalf("leader ledger: %v, %+v", err, exp)
	}
	if he, err := helper.ExportLedger(helperState, ""); err != nil || len(he.Rounds) != rounds || he.Rounds[0].Reports != n {
		t.Fatalf("helper ledger: %v, %+v", err, he)
	}
}

// TestSecureHelperDown: with the helper unreachable every round is
// abandoned, nothing is released or spent, and every LHA is told.
func TestSecureHelperDown(t *testing.T) {
	const n = 2
	f, _ := secureStudy(t, n, 2, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, refusals, _ := runLHAs(t, f, n, ctx)
	abandoned := 0
	for _, e := range refusals {
		if e.Code == protocol.CodeRoundAbandoned && e.Round == 1 {
			abandoned++
		}
	}
	if abandoned < n {
		t.Fatalf("%d round_abandoned messages for round 1 to %d LHAs: %+v", abandoned, n, refusals)
	}
	if f.eng.Rounds() != 0 || f.eng.EpsilonSpent() != 0 {
		t.Fatalf("a study without its helper committed %d rounds, ε %v", f.eng.Rounds(), f.eng.EpsilonSpent())
	}
	exp, err := f.srv.ledger.Export(context.Background())
	if err != nil || len(exp.Rounds) != 0 {
		t.Fatalf("ledger: %v, %d rounds", err, len(exp.Rounds))
	}
}

// TestWireObserverSecure: with a helper each LHA flips its own coin; an
// observer of the frames' sizes and times (TestWireObserver's) guesses
// who was picked at chance, and every LHA sends the same bytes.
func TestWireObserverSecure(t *testing.T) {
	const n, rounds = 4, 12
	L, slack := 800*time.Millisecond, 300*time.Millisecond
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := helper.New(key, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.Handler())
	t.Cleanup(func() { hs.Close(); h.Close() })
	f := start(t, study.File{Helper: &study.HelperRef{URL: hs.URL, PublicKey: key.PublicKey().Bytes()},
		Settings: protocol.Settings{Name: "wire observer, two servers", Epsilon: 100, Rounds: rounds, ExpectedClients: 2, Hidden: []int{4},
			LocalEpochs: 5, RoundLength: study.Duration(L), RoundSlack: study.Duration(slack)}}, lhaNames(n), nil)
	tp, picked, errs := runTapped(t, f, n)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("LHA %d: %v", i, err)
		}
	}
	if f.eng.Rounds() != rounds {
		t.Fatalf("%d rounds committed, want %d", f.eng.Rounds(), rounds)
	}
	checkObserver(t, tp, f, n, rounds, L, picked)
}
