package ui

import (
	"strings"
	"testing"
	"time"
)

// TestSentRows: "What left this computer" lists the latest SentShown
// messages, sums up the earlier ones in words (how many, their bytes,
// from when to when), and lists all of them on request; a short list is
// shown whole, with no summary.
func TestSentRows(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s := &JoinState{}
	for i := range 30 {
		s.Sent = append(s.Sent, SentEntry{At: t0.Add(time.Duration(i) * time.Hour), Type: "report", Bytes: 100, Round: i + 1})
	}
	rows := s.SentRows()
	if len(rows) != SentShown || rows[0].Round != 30-SentShown+1 || rows[len(rows)-1].Round != 30 {
		t.Fatalf("%d rows, rounds %d … %d", len(rows), rows[0].Round, rows[len(rows)-1].Round)
	}
	want := "18 earlier messages, 1,800 bytes in all, sent from 2 Nov 09:00 to 3 Nov 02:00."
	if got := s.SentHiddenWords(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	s.ToggleSentAll()
	if len(s.SentRows()) != 30 || s.SentHiddenWords() != "" {
		t.Errorf("all: %d rows, summary %q", len(s.SentRows()), s.SentHiddenWords())
	}
	s.ToggleSentAll()
	s.Sent = s.Sent[:SentShown-1]
	if len(s.SentRows()) != SentShown-1 || s.SentHiddenWords() != "" {
		t.Errorf("short list: %d rows, summary %q", len(s.SentRows()), s.SentHiddenWords())
	}
	s.Sent = s.Sent[:SentShown+1]
	if got := s.SentHiddenWords(); got != "1 earlier message, 100 bytes in all, sent at 2 Nov 09:00." {
		t.Errorf("one hidden: %q", got)
	}
	s.Sent = s.Sent[:SentShown+3]
	if got := s.SentHiddenWords(); !strings.HasSuffix(got, "sent on 2 Nov from 09:00 to 11:00.") {
		t.Errorf("three hidden: %q", got)
	}
}
