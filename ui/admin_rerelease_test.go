package ui

import (
	"encoding/json"
	"testing"
)

// The dashboard marks a round that the ledger export says was released
// after a restart ("rereleased": true), and only that one.
func TestRoundRowsRereleased(t *testing.T) {
	var led LedgerExport
	if err := json.Unmarshal([]byte(`{"format":"fedcast-ledger/1","rounds":[
		{"round":1,"epsilon":0.5},{"round":2,"epsilon":0.7,"rereleased":true},{"round":3,"epsilon":0.9}]}`), &led); err != nil {
		t.Fatal(err)
	}
	rows := roundRows(&AdminStatus{}, &led)
	var c AdminPage
	want := map[int]string{1: "1", 2: "2 (released after a restart)", 3: "3"}
	for _, r := range rows {
		if got := c.roundLabel(r); got != want[r.Round] || r.Rereleased != (r.Round == 2) {
			t.Errorf("round %d: label %q (rereleased %v), want %q", r.Round, got, r.Rereleased, want[r.Round])
		}
	}
	if len(rows) != 3 {
		t.Errorf("%d rows, want 3", len(rows))
	}
}
