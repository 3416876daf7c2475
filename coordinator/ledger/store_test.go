package ledger

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestStoreRoundTrip: the ledger as a study.Store gives back the genesis
// and the committed rounds it was given (reopened from the file), a repeat
// of a committed round with the same model is a no-op, and one with
// another model is refused as out of order.
func TestStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := open(t, path).Store()
	if st, err := s.Load(); st != nil || err != nil {
		t.Fatalf("empty ledger: %+v, %v", st, err)
	}
	g := genesis()
	if err := s.Init(&g); err != nil {
		t.Fatal(err)
	}
	commit := func(i int) *study.Commit {
		r := round(i)
		return &study.Commit{Event: r.Event, Model: r.Model, Committed: r.Committed,
			Participation: protocol.Participation{Round: i, Sampled: 2, Received: 1}}
	}
	for i := 1; i <= 2; i++ {
		if err := s.Commit(commit(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(commit(2)); err != nil {
		t.Errorf("repeat of round 2 with its model: %v, want a no-op", err)
	}
	other := commit(2)
	other.Model = []float64{9, 9, 9}
	if err := s.Commit(other); !errors.Is(err, study.ErrStoreOutOfOrder) {
		t.Errorf("round 2 again with another model: %v, want ErrStoreOutOfOrder", err)
	}
	if err := s.Finish("rounds", time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	s.(interface{ Close() error }).Close()

	st, err := open(t, path).Store().Load()
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Genesis.Study) != string(g.Study) || st.Genesis.NoiseMultiplier != g.NoiseMultiplier || st.Genesis.Clients != g.Clients ||
		!slices.Equal(st.Genesis.Model, g.Model) || !st.Genesis.Created.Equal(g.Created) {
		t.Errorf("genesis %+v, want %+v", st.Genesis, g)
	}
	if len(st.Events) != 2 || st.Events[1].Round != 2 || !slices.Equal(st.Model, round(2).Model) {
		t.Errorf("events %+v, model %v", st.Events, st.Model)
	}
	if len(st.Participation) != 2 || st.Participation[0].Received != 1 || st.Finished != "rounds" || st.FinishedAt == nil {
		t.Errorf("participation %+v, finished %q at %v", st.Participation, st.Finished, st.FinishedAt)
	}
}
