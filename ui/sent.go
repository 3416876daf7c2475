package ui

import (
	"fmt"
	"slices"
	"time"
)

// What left this computer: every message sent, with its size and
// content in words. The record is kept in this browser across reloads
// (sent_store.go).

// SentEntry is one message that left this computer.
type SentEntry struct {
	At    time.Time `json:"at"`
	Type  string    `json:"type"`  // protocol message type: hello, ready, update or dummy
	Bytes int64     `json:"bytes"` // websocket frame payload size
	Round int       `json:"round"` // 0 for hello and ready
	What  string    `json:"what"`  // in words
	// Outcome of an update: "" while the coordinator has not answered,
	// OutcomeCounted, OutcomeRefused with Reason in plain words, or
	// OutcomeUnknown when the page was reloaded before the answer came.
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Outcomes of a sent update.
const (
	OutcomeCounted = "counted"
	OutcomeRefused = "not counted"
	OutcomeUnknown = "unknown"
)

// SentKept is how many of the latest messages the page keeps one by one,
// here and in this browser's storage; the earlier ones are kept as totals
// only (SentEarlier). A study of hundreds of rounds would otherwise fill
// the browser's storage, which holds a few megabytes for the whole site;
// 500 messages take at most about 170 KB (500 reports, the longest).
const SentKept = 500

// SentSummary sums up messages no longer listed one by one: how many,
// their bytes, and when the first and the last of them left.
type SentSummary struct {
	N     int       `json:"n"`
	Bytes int64     `json:"bytes"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
}

// add returns m with the messages es (oldest first) added.
func (m SentSummary) add(es []SentEntry) SentSummary {
	for _, e := range es {
		if m.N == 0 {
			m.From = e.At
		}
		m.N++
		m.Bytes += e.Bytes
		m.To = e.At
	}
	return m
}

// RecordSent records a message that left this computer.
func (s *JoinState) RecordSent(typ string, size int64, round int) {
	s.lock()
	s.recordSent(typ, size, round)
	s.unlock()
}

// recordSent is RecordSent with the lock held.
func (s *JoinState) recordSent(typ string, size int64, round int) {
	e := SentEntry{At: time.Now(), Type: typ, Bytes: size, Round: round}
	late := s.trainingUnfinished(typ, round)
	if late {
		s.Late = append(s.Late, round)
	}
	switch {
	case typ == "report" && late:
		e.What = fmt.Sprintf("round %d: one report split between the two servers, of the same size as always; this time it holds only zeros, "+
			"because your training had not finished when the report had to leave (your data were not used in this round)", round)
		s.addSent(e)
		return
	case typ == "dummy" && late:
		e.What = fmt.Sprintf("round %d: a stand-in of the same size holding only zeros, sent on time because your training "+
			"had not finished when the changes had to leave (your data were not used in this round)", round)
		s.addSent(e)
		return
	}
	switch typ {
	case "hello":
		e.What = "the join code from your link, sent each time this page connects (says who you are to the coordinator)"
	case "ready":
		e.What = "that you pressed Join with a checked file (nothing about the file: no rows, dates or areas)"
	case "update":
		e.What = fmt.Sprintf("round %d: the model changes computed here, clipped", round)
	case "report":
		e.What = fmt.Sprintf("round %d: one report split between the two servers: the coordinator's part (random-looking numbers) and a sealed key only the helper can open; it holds your model changes if this computer picked itself, zeros otherwise, and says nothing about which", round)
	case "dummy":
		why := "sent when this computer was not picked, so that nobody watching the network can tell"
		if s.PresentOnly {
			why = "sent every round, as the study cannot use your file: nothing of it is in there"
		}
		e.What = fmt.Sprintf("round %d: a stand-in of the same size holding only zeros (%s)", round, why)
	default:
		e.What = typ
	}
	s.addSent(e)
}

// addSent adds e to the record, keeps the latest SentKept messages one by
// one and the earlier ones as totals, and stores the record. Call with
// the lock held.
func (s *JoinState) addSent(e SentEntry) {
	s.Sent = append(s.Sent, e)
	s.capSent()
	s.saveSent()
}

// capSent moves all but the latest SentKept messages into SentEarlier.
func (s *JoinState) capSent() {
	if n := len(s.Sent) - SentKept; n > 0 {
		s.SentEarlier = s.SentEarlier.add(s.Sent[:n])
		s.Sent = slices.Delete(s.Sent, 0, n)
	}
}

// SentCount is the number of messages sent so far.
func (s *JoinState) SentCount() int { return s.SentEarlier.N + len(s.Sent) }

// SentTotal is the number of bytes sent so far.
func (s *JoinState) SentTotal() int64 {
	return s.SentEarlier.add(s.Sent).Bytes
}

// SentShown is how many of the latest messages "What left this computer"
// lists until the LHA asks for all: a continuing study sends one report
// a round, so the full list grows to hundreds of rows.
const SentShown = 12

// SentRows are the rows of "What left this computer": the latest
// SentShown messages, or all of them once SentAll is set.
func (s *JoinState) SentRows() []SentEntry {
	if s.SentAll || len(s.Sent) <= SentShown {
		return s.Sent
	}
	return s.Sent[len(s.Sent)-SentShown:]
}

// SentHiddenWords sums up, in the list's first row, the earlier messages
// SentRows leaves out ("" when none is left out): those kept as totals
// only (SentEarlier) and those not shown until the LHA asks for all.
func (s *JoinState) SentHiddenWords() string {
	rows := s.SentRows()
	h := s.SentEarlier.add(s.Sent[:len(s.Sent)-len(rows)])
	if h.N == 0 {
		return ""
	}
	w := fmt.Sprintf("%s, %s bytes in all, sent %s.", Plural(h.N, "earlier message"),
		FormatCount(float64(h.Bytes)), spanWords(h.From, h.To))
	if s.SentAll {
		w += fmt.Sprintf(" Only the latest %s are listed one by one.", FormatCount(SentKept))
	}
	return w
}

// spanWords says when messages sent from a to b left: "at 2 Nov 09:00",
// "on 2 Nov from 09:00 to 17:30" or "from 2 Nov 09:00 to 3 Nov 02:00".
func spanWords(a, b time.Time) string {
	const day, clock = "2 Jan", "15:04"
	switch {
	case a.Format(day+" "+clock) == b.Format(day+" "+clock):
		return "at " + a.Format(day+" "+clock)
	case a.Format(day) == b.Format(day):
		return "on " + a.Format(day) + " from " + a.Format(clock) + " to " + b.Format(clock)
	}
	return "from " + a.Format(day+" "+clock) + " to " + b.Format(day+" "+clock)
}

// ToggleSentAll switches "What left this computer" between the latest
// messages and all of them.
func (s *JoinState) ToggleSentAll() { s.SentAll = !s.SentAll }

// trainingUnfinished reports whether a dummy or report for round leaves
// while this page was still training round: the session answers on time
// with zeros then (session.answer), and the words must not say the
// computer was not picked. Training reports its last step before its
// result can be sent, and a round sat out for the ε limit never starts
// training, so a step short of the last one means the training ran late.
func (s *JoinState) trainingUnfinished(typ string, round int) bool {
	if typ != "dummy" && typ != "report" {
		return false
	}
	for _, k := range s.Skips {
		if k.Round == round {
			return false
		}
	}
	return round > 0 && round == s.TrainRound && s.Steps > 0 && s.Step < s.Steps
}
