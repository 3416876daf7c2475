package server

import (
	"encoding/json"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestReadyFrame: a connection starts not ready (the token travels in the
// handshake; there is no hello to say more). It does not count as ready
// on the dashboard and gets no round_start while the rounds run for a
// ready LHA; once it says ready it gets the open round's round_start (or
// the next one), never one of a round that opened before, and a repeated
// ready has no answer and changes nothing.
func TestReadyFrame(t *testing.T) {
	f := hostile(t) // q = 1: every LHA is picked; quorum 1
	open := dialRaw(t, f, f.secrets.LHAs[0])
	expect[*protocol.Welcome](open)
	ready := readyRaw(t, f, f.secrets.LHAs[1])
	for range 2 {
		expect[*protocol.RoundStart](ready)
	}
	_, b := get(t, f.http.URL+"/api/admin/status", f.secrets.Admin)
	var a AdminStatus
	if err := json.Unmarshal(b, &a); err != nil || a.Online != 2 || a.Ready != 1 {
		t.Fatalf("admin status: %d online, %d ready (%v); want 2 online, 1 ready", a.Online, a.Ready, err)
	}
	// Rounds opened before the ready frame; none of their round_starts
	// may reach the connection that was only open.
	before := f.srv.PublicStatus().Schedule.Round
	if before < 2 {
		t.Fatalf("round %d open after two round_starts", before)
	}
	open.send(&protocol.Ready{})
	open.send(&protocol.Ready{}) // repeated: no answer
	rs := expect[*protocol.RoundStart](open)
	if rs.Round < before {
		t.Fatalf("round_start of round %d reached a connection that said ready in round %d", rs.Round, before)
	}
	if !rs.Picked || len(rs.Weights) != f.eng.Study.Params {
		t.Fatalf("round_start after ready: picked %v, %d weights", rs.Picked, len(rs.Weights))
	}
	// The next frame of that connection is a broadcast or the next
	// round_start, not an error about the second ready.
	for range 3 {
		m, err := open.read()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := m.(*protocol.Error); ok {
			t.Fatalf("a repeated ready was answered %v", e)
		}
	}
}
