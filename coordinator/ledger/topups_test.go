package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// A top-up is recorded once, in order, and opens a new period: a study
// that had finished takes rounds again until that period's end is
// recorded; the export lists the top-ups. The record is append-only.
func TestTopUpsReopenAndRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path)
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := l.Commit(round(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if err := l.Finish("rounds", at); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(round(3), nil); !errors.Is(err, ErrFinished) {
		t.Fatalf("commit after the end: %v, want ErrFinished", err)
	}
	tu := protocol.TopUp{Number: 1, FromEpsilon: 2, Epsilon: 3, Campaigns: 1, Rounds: 2, NoiseMultiplier: 1.5, Order: 12, Previous: "ab", At: at.Add(time.Hour)}
	if err := l.TopUp(tu); err != nil {
		t.Fatal(err)
	}
	if err := l.TopUp(tu); err != nil {
		t.Fatalf("the same top-up again: %v", err)
	}
	other := tu
	other.Epsilon = 4
	if err := l.TopUp(other); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("another top-up 1: %v", err)
	}
	skip := tu
	skip.Number = 3
	if err := l.TopUp(skip); err == nil {
		t.Fatal("top-up 3 after 1 was recorded")
	}
	if reason, _, err := l.Finished(); err != nil || reason != "" {
		t.Fatalf("after the top-up: finished %q (%v), want running", reason, err)
	}
	if err := l.Commit(round(3), nil); err != nil {
		t.Fatalf("commit after the top-up: %v", err)
	}
	if err := l.Finish("budget", at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, path)
	reason, when, err := l.Finished()
	if err != nil || reason != "budget" || !when.Equal(at.Add(2*time.Hour)) {
		t.Fatalf("reopened: finished %q at %v (%v)", reason, when, err)
	}
	e, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(e.TopUps) != 1 || e.TopUps[0].Epsilon != 3 || len(e.Rounds) != 3 || e.Finished.Reason != "budget" {
		t.Fatalf("export: %d top-ups %+v, %d rounds, finished %+v", len(e.TopUps), e.TopUps, len(e.Rounds), e.Finished)
	}
	if _, err := l.db.Exec(`DELETE FROM topups`); err == nil {
		t.Fatal("a top-up was deleted")
	}
}
