package ledger

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Releases are recorded once per round, only for committed rounds, and a
// re-release is marked in the export; the records are append-only.
func TestReleases(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := l.Commit(round(i), &Participation{Round: i}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)
	if last, err := l.LastReleased(); err != nil || last != 0 {
		t.Fatalf("LastReleased before any release: %d, %v; want 0", last, err)
	}
	if err := l.Release(1, at, false); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(1, at.Add(time.Hour), true); err != nil { // a repeat: no-op
		t.Fatal(err)
	}
	if err := l.Release(3, at, false); err == nil {
		t.Error("release of an uncommitted round recorded")
	}
	if last, _ := l.LastReleased(); last != 1 {
		t.Errorf("LastReleased = %d, want 1 (round 2 committed, not released)", last)
	}
	if err := l.Release(2, at.Add(time.Minute), true); err != nil {
		t.Fatal(err)
	}
	again, err := l.Rereleased()
	if err != nil || !slices.Equal(again, []int{2}) {
		t.Errorf("Rereleased = %v, %v; want [2]", again, err)
	}
	e, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e.Rounds[0].Rereleased || !e.Rounds[1].Rereleased {
		t.Errorf("export marks %v, %v; want round 2 only", e.Rounds[0].Rereleased, e.Rounds[1].Rereleased)
	}
	for _, q := range []string{`UPDATE releases SET rereleased = 0`, `DELETE FROM releases`, `UPDATE release_tracking SET after = 5`} {
		if _, err := l.db.Exec(q); err == nil {
			t.Errorf("%s: allowed on an append-only ledger", q)
		}
	}
}

// A ledger written before releases were recorded: its committed rounds
// count as released when it is opened by this version.
func TestReleasesOlderLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := l.Commit(round(i), &Participation{Round: i}); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the older schema.
	for _, q := range []string{`DROP TABLE releases`, `DROP TABLE release_tracking`} {
		if _, err := l.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l = open(t, path)
	if last, err := l.LastReleased(); err != nil || last != 3 {
		t.Errorf("LastReleased of an older ledger with 3 rounds = %d, %v; want 3", last, err)
	}
}
