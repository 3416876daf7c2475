package ui

import (
	"encoding/json"
	"errors"

	"github.com/fedcast/fedcast/shared/session"
)

// "What left this computer" is the LHA's record of what this page sent,
// so it must not start empty when the page is reloaded while the study
// goes on. It is kept in this browser's localStorage per study and LHA,
// rewritten after each message and each answer to an update: the latest
// SentKept messages one by one and totals of the earlier ones. It holds
// nothing that was not already shown in the list.

// SentStore keeps "What left this computer" across reloads (the page's
// localStorage, set by package wasm). Nil: kept for the page's life only.
var SentStore session.AccountStore

// SentLostWords is said once, above the list, when the record kept in
// this browser could not be read.
const SentLostWords = "Earlier messages are missing from this list: the record of them kept in this browser could not be read."

// sentRecord is the stored form of the record.
type sentRecord struct {
	Version int         `json:"v"`
	Earlier SentSummary `json:"earlier"`
	Lost    bool        `json:"lost,omitempty"` // SentLost
	Sent    []SentEntry `json:"sent"`
}

// sentVersion is the version of sentRecord written.
const sentVersion = 1

// errSentRecord: the stored record is not one this page wrote.
var errSentRecord = errors.New("ui: damaged record of sent messages")

// sentKey names this study's and LHA's record in the store.
func (s *JoinState) sentKey() string {
	return "fedcast-sent:" + s.Welcome.Study.Name + ":" + s.Welcome.LHA
}

// restoreSent puts the record kept in this browser before what this page
// has sent (nothing, or the hello just made). An update still waiting
// for its answer will not get one now: its outcome becomes unknown. A
// record that cannot be read is dropped, and the list says so
// (SentLost). Call with the lock held, once Welcome is known.
func (s *JoinState) restoreSent() {
	if SentStore == nil || s.Welcome == nil {
		return
	}
	b, err := SentStore.LoadAccount(s.sentKey())
	if err == nil && len(b) == 0 {
		return
	}
	r, err := readSentRecord(b, err)
	if err != nil {
		s.SentLost = true
		return
	}
	for i := range r.Sent {
		if e := &r.Sent[i]; e.Type == "update" && e.Outcome == "" {
			e.Outcome = OutcomeUnknown
		}
	}
	s.Sent = append(r.Sent, s.Sent...)
	s.SentEarlier, s.SentLost = r.Earlier, r.Lost
	s.capSent()
}

// readSentRecord parses a stored record (err: the store's, when reading
// failed) and checks what the list relies on.
func readSentRecord(b []byte, err error) (sentRecord, error) {
	var r sentRecord
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, errors.Join(errSentRecord, err)
	}
	if r.Version != sentVersion || r.Earlier.N < 0 || r.Earlier.Bytes < 0 || r.Earlier.N == 0 && r.Earlier.Bytes != 0 {
		return r, errSentRecord
	}
	for _, e := range r.Sent {
		if e.Type == "" || e.Bytes < 0 || e.At.IsZero() {
			return r, errSentRecord
		}
	}
	return r, nil
}

// saveSent stores the record. When the store refuses (full, or switched
// off), the record lasts for the page's life only, as without a store.
// Call with the lock held.
func (s *JoinState) saveSent() {
	if SentStore == nil || s.Welcome == nil {
		return
	}
	b, err := json.Marshal(sentRecord{Version: sentVersion, Earlier: s.SentEarlier, Lost: s.SentLost, Sent: s.Sent})
	if err == nil {
		SentStore.SaveAccount(s.sentKey(), b)
	}
}
