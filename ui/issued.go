package ui

import (
	"bytes"

	"github.com/fedcast/fedcast/shared/session"
)

// The forecasts this page issued (session.Issued), kept in this browser's
// localStorage per study and LHA, so that the guard scores the shared
// model on the weeks the page really forecast once their outcomes are in
// the file chosen later: the same rule as `fedcast client --issued FILE`.
// Nothing of it is sent.

// IssuedStore keeps the page's issued forecasts across reloads (the
// page's localStorage, set by package wasm). Nil: kept for the page's
// life only.
var IssuedStore session.AccountStore

// issuedKey names this study's and LHA's issued forecasts in the store.
func (s *JoinState) issuedKey() string {
	if s.Welcome == nil {
		return "fedcast-issued"
	}
	return "fedcast-issued:" + s.Welcome.Study.Name + ":" + s.Welcome.LHA
}

// loadIssued returns the forecasts issued before in this browser (none
// when they cannot be read: the guard then counts the held-out weeks
// only). Call with the lock held.
func (s *JoinState) loadIssued() []session.Issued {
	b := s.issuedMem
	if IssuedStore != nil {
		b, _ = IssuedStore.LoadAccount(s.issuedKey())
	}
	if len(b) == 0 {
		return nil
	}
	rows, err := session.ReadIssued(bytes.NewReader(b), "this browser's issued forecasts")
	if err != nil {
		return nil
	}
	return rows
}

// saveIssued adds the forecasts just made to the kept ones. Call with the
// lock held.
func (s *JoinState) saveIssued(old []session.Issued, gs []session.GuardedForecast) {
	if len(gs) == 0 {
		return
	}
	var buf bytes.Buffer
	if err := session.WriteIssued(&buf, session.MergeIssued(old, session.IssuedOf(gs))); err != nil {
		return
	}
	if IssuedStore == nil || IssuedStore.SaveAccount(s.issuedKey(), buf.Bytes()) != nil {
		s.issuedMem = buf.Bytes()
	}
}
