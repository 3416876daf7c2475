package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

func TestSecureWords(t *testing.T) {
	key, _ := secagg.GenerateKey()
	st := &protocol.Study{NoiseMultiplier: 1, Params: 241,
		Helper:   &protocol.Helper{URL: "https://helper.example.org:8090", PublicKey: key.PublicKey().Bytes(), Operator: "Helper e.V."},
		Settings: protocol.Settings{ClipNorm: 0.5}}
	w := Secure(st, "coordinator.example.org")
	for _, c := range []struct{ got, want string }{
		{w.Who, "helper run by Helper e.V. at helper.example.org:8090"},
		{w.Who, key.PublicKey().Fingerprint()},
		{w.Who, "coordinator at coordinator.example.org"},
		{w.Caveat, "never share their data with each other"},
		// The same size as the study card's and the sent log's (the
		// frame as it leaves), and its parts add up to it.
		{w.Sent, "one report of 2,088 bytes: 1,928 bytes of random-looking numbers for the coordinator, a sealed key of 80 bytes"},
		{w.Sent, "and 80 bytes that label the report"},
		{w.Sent, "at most 16384 steps"},
		{w.Picked, "Whether you were picked for a round never leaves this computer"},
		{w.Each, "Every round, picked or not: one report of 2,088 bytes"},
		{w.Each, "model's 241 numbers"},
		{w.Each, "at most 0.5"},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%q lacks %q", c.got, c.want)
		}
	}
	// 2,088 is the size of the frame that leaves, as the sent log lists it.
	if _, b, err := protocol.Encode(&protocol.Report{Round: 1, Body: make([]byte, secagg.ReportSize(241))}); err != nil || len(b) != 2088 {
		t.Errorf("a report frame of a 241-weight model: %d bytes (%v), the words say 2,088", len(b), err)
	}
	st.Helper.LeaderOperator = "Gesundheitsamt Nord"
	if w := Secure(st, "coordinator.example.org"); !strings.Contains(w.Who, "the coordinator run by Gesundheitsamt Nord at coordinator.example.org") ||
		!strings.Contains(w.Who, "helper run by Helper e.V.") {
		t.Errorf("both operators named: %q", w.Who)
	}
	plain := Secure(&protocol.Study{}, "x")
	if !strings.Contains(plain.Who, "coordinator receives each clipped update") || plain.Caveat != "" || plain.Picked != "" || plain.Each != "" {
		t.Errorf("without a helper: %+v", plain)
	}
	if got := SecureEpsilon(2, 1.366); !strings.Contains(got, "either server on its own: ε = 2.") || !strings.Contains(got, "Against everyone else") || !strings.Contains(got, "ε = 1.37 (a reasoned figure, not a proven one)") {
		t.Errorf("SecureEpsilon: %q", got)
	}
}

// The dashboard of a study with a helper shows both figures: each
// server's ε and the public's, with the budget.
func TestAdminSecureWords(t *testing.T) {
	st := &AdminStatus{Status: protocol.Status{SecureAggregation: true, EpsilonSpent: 2, EpsilonPublic: 1.366, EpsilonBudget: 2, Delta: 1e-5}}
	c := &AdminPage{S: &AdminState{Status: st}}
	if w := c.epsilonWords(); w != "either server: ε = 2; everyone else: ε = 1.37 (reasoned, not proven); budget 2" {
		t.Errorf("dashboard with a helper: %q", w)
	}
}

// The Worker's check of the helper's key reaches the dashboard from the
// status JSON: a key that differs (or no answer) is a problem to fix, a
// match a quiet line, and serve's status (no such field) shows nothing.
func TestAdminHelperKey(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.Local)
	for _, c := range []struct {
		json, class, words string
	}{
		{`{"helper_key":{"state":"differs","checked_at":"` + at.Format(time.RFC3339) + `","words":"the helper at http://h has the key ab:cd, but the study file names the key 12:34"}}`,
			"problem", "The helper at http://h has the key ab:cd, but the study file names the key 12:34. (Checked at 10:00:00.)"},
		{`{"helper_key":{"state":"no answer","words":"the helper at http://h cannot be reached (timeout)."}}`,
			"problem", "The helper at http://h cannot be reached (timeout)."},
		{`{"helper_key":{"state":"matches","words":"the helper at http://h has the key the study file names (12:34)"}}`,
			"muted", "The helper at http://h has the key the study file names (12:34)."},
		{`{"next_round":2}`, "muted", ""},
	} {
		var up AdminUpcoming
		if err := json.Unmarshal([]byte(c.json), &up); err != nil {
			t.Fatal(err)
		}
		p := &AdminPage{S: &AdminState{Status: &AdminStatus{}, Upcoming: up, Updated: at}}
		if got := p.helperKeyWords(); got != c.words || p.helperKeyClass() != c.class {
			t.Errorf("%s:\n got %q (%s)\nwant %q (%s)", c.json, got, p.helperKeyClass(), c.words, c.class)
		}
	}
}
