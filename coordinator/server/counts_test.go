package server

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// countWords are the parts of a JSON key that would carry a round's
// participation (issue 22: "per-round counts of picked and received LHAs
// appear only in the admin view").
var countWords = []string{"sampled", "picked", "received", "rejected", "online", "participa", "not_counted", "duration"}

// countKeys returns the keys of the JSON value v (at any depth) that name
// a participation count.
func countKeys(v any, path string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			for _, w := range countWords {
				if strings.Contains(k, w) {
					out = append(out, path+"."+k)
				}
			}
			out = append(out, countKeys(x, path+"."+k)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, countKeys(x, path+"[]")...)
		}
	}
	return out
}

// noCounts fails t if the JSON b (what an LHA or the public can see) has
// a participation count.
func noCounts(t *testing.T, what string, b []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if keys := countKeys(v, ""); len(keys) > 0 {
		t.Errorf("%s carries participation counts: %v", what, keys)
	}
}

// TestCountsAdminOnly: a refused update counts as rejected in its own
// round and its answer names that round (item 5 of issue 22, over the
// wire: a NaN weight is refused while decoding, a short update by the
// engine), and the counts of picked, received and rejected updates appear
// in the admin status only: not in the public status, not in the welcome
// (its round log) an LHA gets, and not in the ledger export
// (/api/admin/ledger, the same JSON as `fedcast ledger export`).
func TestCountsAdminOnly(t *testing.T) {
	f := hostile(t)
	c := readyRaw(t, f, f.secrets.LHAs[0])
	expect[*protocol.Welcome](c)
	dim := f.eng.Study.Params

	nanRound := inWindow(c).Round
	_, nan, _ := protocol.Encode(&protocol.Update{Round: nanRound, Weights: make([]float64, dim)})
	wAt := protocol.HeaderSize + len(`{"dummy":0}`)
	binary.LittleEndian.PutUint64(nan[wAt:], math.Float64bits(math.NaN()))
	sum := hashOf(nan[wAt:]) // a valid frame but for the NaN
	copy(nan[16:48], sum[:])
	c.write(protocol.Binary, nan)
	if v := verdictOf(c); v == nil || v.Code != protocol.CodeBadUpdate || v.Round != nanRound || !strings.Contains(v.Message, "NaN") {
		t.Fatalf("NaN update in round %d: answer %+v, want bad_update naming the round and the NaN", nanRound, v)
	}
	shortRound := inWindow(c).Round
	c.send(&protocol.Update{Round: shortRound, Weights: make([]float64, dim-1)})
	if v := verdictOf(c); v == nil || v.Code != protocol.CodeBadUpdate || v.Round != shortRound {
		t.Fatalf("short update in round %d: answer %+v, want bad_update naming the round", shortRound, v)
	}
	goodRound := inWindow(c).Round
	c.send(&protocol.Update{Round: goodRound, Weights: make([]float64, dim)})
	if v := verdictOf(c); v != nil {
		t.Fatalf("good update in round %d: answer %+v", goodRound, v)
	}
	inWindow(c) // the good round is committed and released

	parts, err := f.srv.ledger.Participation()
	if err != nil {
		t.Fatal(err)
	}
	byRound := map[int]protocol.Participation{}
	for _, p := range parts {
		byRound[p.Round] = p
	}
	for r, want := range map[int][2]int{nanRound: {0, 1}, shortRound: {0, 1}, goodRound: {1, 0}} {
		if p := byRound[r]; p.Received != want[0] || p.Rejected != want[1] {
			t.Errorf("round %d: received %d, rejected %d; want %d and %d", r, p.Received, p.Rejected, want[0], want[1])
		}
	}

	_, b := get(t, f.http.URL+"/api/admin/status", f.secrets.Admin)
	var v any
	if err := json.Unmarshal(b, &v); err != nil || len(countKeys(v, "")) == 0 {
		t.Fatalf("admin status %s (%v): the counts should be here", b, err)
	}
	code, b := get(t, f.http.URL+"/api/status", "")
	if code != http.StatusOK {
		t.Fatalf("public status: HTTP %d", code)
	}
	noCounts(t, "public status", b)
	code, b = get(t, f.http.URL+"/api/admin/ledger", f.secrets.Admin)
	if code != http.StatusOK || !strings.Contains(string(b), `"rounds"`) {
		t.Fatalf("ledger export: HTTP %d %s", code, b)
	}
	noCounts(t, "ledger export", b)
	other := readyRaw(t, f, f.secrets.LHAs[1])
	w := expect[*protocol.Welcome](other)
	if len(w.Log) < goodRound {
		t.Fatalf("welcome log has %d rounds, want at least %d", len(w.Log), goodRound)
	}
	b, err = json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	noCounts(t, "welcome", b)
}
