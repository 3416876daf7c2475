package e2e

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/worker/object"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
	"github.com/fedcast/fedcast/ui"
)

// A study with a helper on workerd: the Worker leads, a native helper
// (the handler `fedcast helper serve` runs, in process on a loopback port)
// adds its share, and headless clients complete the study. Every round
// is committed with secure aggregation, and the helper's ledger has the
// same rounds with the same ε.
func TestStudyWithHelper(t *testing.T) {
	bin := workerdPath(t)
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	hdir := t.TempDir()
	var hlog logBuf
	h, err := helper.New(key, filepath.Join(hdir, "state"), &helper.Options{Log: slog.New(slog.NewTextHandler(&hlog, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.Handler())
	t.Cleanup(func() { hs.Close(); h.Close() })
	pub := writePub(t, hdir, key)

	addr := freeAddr(t)
	names := []string{"A", "B", "C"}
	const rounds = 3
	s := newStudy(t, names, addr, "--epsilon", "4", "--rounds", strconv.Itoa(rounds), "--expected", "2", "--round-length", "3s",
		"--helper", hs.URL, "--helper-key", pub)
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	final := finishAll(t, startClients(t, s, names), names, rounds)
	st := w.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	if !st.SecureAggregation || st.Round != rounds || !(st.EpsilonPublic > 0 && st.EpsilonPublic < st.EpsilonSpent) {
		t.Errorf("final status: secure %v, %d rounds, ε %v, public ε %v", st.SecureAggregation, st.Round, st.EpsilonSpent, st.EpsilonPublic)
	}
	var state storedState
	if err := w.get("/api/admin/state", s.admin, &state); err != nil {
		t.Fatal(err)
	}
	if len(state.Events) != rounds || protocol.HashHex(state.Model) != final {
		t.Fatalf("stored state: %d events, model %s; clients' %s", len(state.Events), protocol.HashHex(state.Model), final)
	}
	ex, err := helper.ExportLedger(filepath.Join(hdir, "state"), "")
	if err != nil || len(ex.Rounds) != rounds {
		t.Fatalf("helper ledger: %v, %+v", err, ex)
	}
	for i, r := range ex.Rounds {
		if r.Epsilon != state.Events[i].Epsilon || r.Reports != len(names) {
			t.Errorf("round %d: helper ε %v over %d reports, leader ε %v", i+1, r.Epsilon, r.Reports, state.Events[i].Epsilon)
		}
	}
	// What the two operators read: the helper one line per round served,
	// the Worker's log who joined and its memory in words.
	if n := strings.Count(hlog.String(), `msg="round served"`); n != rounds {
		t.Errorf("the helper logged %d rounds served, want %d:\n%s", n, rounds, hlog.String())
	}
	if k := w.helperKey(s.admin); k.State != object.KeyMatches || k.HelperFingerprint != key.PublicKey().Fingerprint() {
		t.Errorf("helper_key: %+v", k)
	}
	for _, want := range []string{`LHA "A" joined (`, "Go program memory: ", "INFO the helper at " + hs.URL + " has the key the study file names"} {
		if !strings.Contains(w.log.String(), want) {
			t.Errorf("workerd's log lacks %q:\n%s", want, w.log)
		}
	}
	t.Logf("study with a helper on workerd: %d LHAs, %d rounds, ε per server %.6g, ε against the public %.6g", len(names), rounds, st.EpsilonSpent, st.EpsilonPublic)
}

// writePub writes the helper's public key as `helper keygen` does.
func writePub(t *testing.T, dir string, key *secagg.PrivateKey) string {
	t.Helper()
	pub := filepath.Join(dir, "helper.pub")
	if err := os.WriteFile(pub, key.PublicKey().MarshalPublic(), 0o644); err != nil {
		t.Fatal(err)
	}
	return pub
}

// With the helper down (nothing listens at its address), the Worker
// says so in the admin status (the key check: no answer) and abandons the
// round: the LHAs are told in plain words, nothing is committed and no
// budget is spent.
func TestStudyWithHelperDown(t *testing.T) {
	bin := workerdPath(t)
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	addr, helperAddr := freeAddr(t), freeAddr(t)
	names := []string{"A", "B"}
	s := newStudy(t, names, addr, "--epsilon", "4", "--rounds", "2", "--expected", "1", "--round-length", "2s",
		"--helper", "http://"+helperAddr, "--helper-key", writePub(t, t.TempDir(), key))
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	if k := w.helperKey(s.admin); k.State != object.KeyNoAnswer || !strings.HasPrefix(k.Words, "the helper at http://"+helperAddr+" cannot be reached (") {
		t.Errorf("helper_key with the helper down: %+v", k)
	}
	e := firstAbandon(t, w, s)
	if e.Round != 1 || !strings.Contains(e.Message, "the second server (the helper) did not answer") ||
		!strings.Contains(e.Message, "no privacy budget was spent") {
		t.Fatalf("round_abandoned %+v", e)
	}
	st, err := w.status()
	if err != nil || st.Round != 0 || st.EpsilonSpent != 0 {
		t.Fatalf("after the abandoned round: %+v, %v", st, err)
	}
	var state storedState
	if err := w.get("/api/admin/state", s.admin, &state); err != nil || len(state.Events) != 0 {
		t.Fatalf("stored state: %d events, %v", len(state.Events), err)
	}
}

// A helper started with another key than the study names: the Worker
// cannot refuse to start as serve does, so its admin status and its log
// say it, with both fingerprints and what to do, and the rounds go on
// (the helper refuses each, which abandons it: nothing spent).
func TestHelperKeyDiffersOnWorkerd(t *testing.T) {
	bin := workerdPath(t)
	studyKey, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := helper.New(otherKey, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.Handler())
	t.Cleanup(func() { hs.Close(); h.Close() })
	addr := freeAddr(t)
	s := newStudy(t, []string{"A", "B"}, addr, "--epsilon", "4", "--rounds", "2", "--expected", "1", "--round-length", "2s",
		"--helper", hs.URL, "--helper-key", writePub(t, t.TempDir(), studyKey))
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	k := w.helperKey(s.admin)
	for _, want := range []string{"the helper at " + hs.URL + " has the key " + otherKey.PublicKey().Fingerprint(),
		"but the study file names the key " + studyKey.PublicKey().Fingerprint(), "Start the helper with the key the study names"} {
		if !strings.Contains(k.Words, want) {
			t.Errorf("helper_key words lack %q: %s", want, k.Words)
		}
	}
	if k.State != object.KeyDiffers || !strings.Contains(w.log.String(), "WARN "+k.Words) {
		t.Errorf("helper_key %+v; workerd's log lacks its words:\n%s", k, w.log)
	}
	// The dashboard reads the same field (ui.AdminUpcoming) and marks it a
	// problem.
	var up ui.AdminUpcoming
	if err := w.get("/api/admin/status", s.admin, &up); err != nil || up.HelperKey == nil ||
		up.HelperKey.State != string(object.KeyDiffers) || up.HelperKey.Words != k.Words {
		t.Errorf("the dashboard's view of helper_key: %+v, %v", up.HelperKey, err)
	}
	if e := firstAbandon(t, w, s); e.Round != 1 || !strings.Contains(e.Message, "no privacy budget was spent") {
		t.Fatalf("round_abandoned %+v", e)
	}
	t.Logf("helper_key: %s", k.Words)
}

// helperKey polls the admin status until the check of the helper's key
// has an outcome, and returns it.
func (w *workerd) helperKey(admin string) object.HelperKey {
	w.t.Helper()
	var v struct {
		HelperKey *object.HelperKey `json:"helper_key"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v.HelperKey = nil
		if err := w.get("/api/admin/status", admin, &v); err == nil && v.HelperKey != nil && v.HelperKey.State != object.KeyAsking {
			return *v.HelperKey
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("the admin status has no outcome of the key check within 20 s: %+v\nworkerd:\n%s", v.HelperKey, w.log)
	return object.HelperKey{}
}

// firstAbandon joins the two LHAs of s with bare websockets (they send
// no reports) and returns the first round_abandoned the first receives.
func firstAbandon(t *testing.T, w *workerd, s *study) *protocol.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, _ := dial(ctx, t, w.base, s.links[0])
	b, _ := dial(ctx, t, w.base, s.links[1])
	defer a.CloseNow()
	defer b.CloseNow()
	go func() { // B's messages are read and dropped
		for {
			if _, _, err := b.Read(ctx); err != nil {
				return
			}
		}
	}()
	for {
		if e, ok := read(ctx, t, a).(*protocol.Error); ok && e.Code == protocol.CodeRoundAbandoned {
			return e
		}
	}
}
