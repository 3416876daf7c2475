package study

import "testing"

// This package's tests run the engine on serve's SQLite ledger, which is a
// Store (coordinator/ledger). They cannot import the ledger, which imports
// this package, so ledger_open_test.go (package study_test) sets these two
// functions before any test runs.
var (
	// LedgerStoreForTest opens the ledger file at path (created if absent)
	// as a Store whose Close closes the file.
	LedgerStoreForTest func(path string) (Store, error)
	// LedgerExportForTest reads the ledger file at path as its public
	// JSON export (what `fedcast ledger export` writes).
	LedgerExportForTest func(path string) ([]byte, error)
)

// ledgerStore is a Store on a ledger file.
type ledgerStore interface {
	Store
	Close() error
}

// openLedger opens the ledger file at path; the test closes it at its end.
func openLedger(t testing.TB, path string) ledgerStore {
	t.Helper()
	s, err := LedgerStoreForTest(path)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := s.(ledgerStore)
	if !ok {
		t.Fatalf("the ledger's Store %T has no Close", s)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// ledgerOf returns the ledger under e (opened by openEngine).
func ledgerOf(e *Engine) ledgerStore { return e.store.(ledgerStore) }

// ledgerState reads back what the ledger under e holds.
func ledgerState(t *testing.T, e *Engine) *State {
	t.Helper()
	st, err := ledgerOf(e).Load()
	if err != nil || st == nil {
		t.Fatalf("read the ledger: %v (state %v)", err, st)
	}
	return st
}
