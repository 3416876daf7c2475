package session

import (
	"encoding/json"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// page is one load of the LHA's page: a session on the shared store that
// has just processed the coordinator's welcome.
func page(t *testing.T, store AccountStore, st protocol.Study, state string) *Session {
	t.Helper()
	s := &Session{wsURL: "wss://coordinator.example/api/ws", sampled: map[int]bool{}, opt: Options{Accounts: store}}
	if err := s.welcome(&protocol.Welcome{Study: st, LHA: "Kreis A", State: state}); err != nil {
		t.Fatal(err)
	}
	return s
}

func storedSteps(t *testing.T, store AccountStore, s *Session) int {
	t.Helper()
	b, err := store.LoadAccount(s.accountKey())
	if err != nil || len(b) == 0 {
		t.Fatalf("nothing stored: %v", err)
	}
	var d fl.LocalDPSGD
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("stored account does not read back: %v", err)
	}
	return d.Accountant.Steps()
}

// TestSessionKeepsLocalAccountAcrossReload: with an AccountStore (the
// browser's localStorage) a reloaded page of the same study keeps the
// local DP-SGD steps the earlier page took, where the charge for the
// rounds so far cannot see them: here round 1 is trained, abandoned by a
// coordinator restart and opened again, trained again, and the page
// reloads while it is open. The charge says one round (E steps); the
// store says two, and the session takes two. Without a store, or with an
// unreadable value, the charge stands; steps are stored before they are
// taken.
func TestSessionKeepsLocalAccountAcrossReload(t *testing.T) {
	st := exampleStudy(t, 3)
	e := st.LocalEpochs
	store := &MemAccountStore{}
	w := []float64{0.1, 0.2, 0.3, 0}
	x, y := windows()
	train := func(s *Session) {
		t.Helper()
		cfg, err := st.FLConfig()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.update(nn.NewTrainer(s.mlp), w, x, y, cfg, make([]float64, len(w)), nil); err != nil {
			t.Fatal(err)
		}
	}

	p1 := page(t, store, st, protocol.StateWaiting)
	if b, _ := p1.ExampleBudget(); b.Steps != 0 || storedSteps(t, store, p1) != 0 {
		t.Fatalf("fresh page: %+v", b)
	}
	train(p1) // round 1; then the coordinator restarts and abandons it
	if got := storedSteps(t, store, p1); got != e {
		t.Fatalf("stored %d steps after a round, want %d", got, e)
	}
	p2 := page(t, store, st, protocol.StateRunning) // round 1 open again, nothing released
	if b, _ := p2.ExampleBudget(); b.Steps != e {
		t.Fatalf("reload during the reopened round: %d steps, want %d", b.Steps, e)
	}
	train(p2) // round 1 again
	p3 := page(t, store, st, protocol.StateRunning)
	b3, _ := p3.ExampleBudget()
	if b3.Steps != 2*e || storedSteps(t, store, p3) != 2*e {
		t.Errorf("reload after training twice: %d steps (stored %d), want %d", b3.Steps, storedSteps(t, store, p3), 2*e)
	}
	if b, _ := page(t, nil, st, protocol.StateRunning).ExampleBudget(); b.Steps != e {
		t.Errorf("without a store: %d steps, want the charge %d", b.Steps, e)
	}
	// Another study (another budget) has its own account.
	other := exampleStudy(t, 2)
	if b, _ := page(t, store, other, protocol.StateWaiting).ExampleBudget(); b.Steps != 0 {
		t.Errorf("another study starts from %d steps", b.Steps)
	}
	// An unreadable value is ignored (the charge stands) and replaced.
	store.SaveAccount(p3.accountKey(), []byte("not json"))
	p4 := page(t, store, st, protocol.StateRunning)
	if b, _ := p4.ExampleBudget(); b.Steps != e || storedSteps(t, store, p4) != e {
		t.Errorf("unreadable store: %d steps, want the charge %d", b.Steps, e)
	}
}
