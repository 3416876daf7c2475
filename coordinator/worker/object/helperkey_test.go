package object

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/shared/secagg"
)

// askKey performs the KeyFetch against h as the Durable Object would and
// returns the answer (status, status line, body).
func askKey(t *testing.T, h *helper.Helper, f *KeyFetch) (int, string, []byte) {
	t.Helper()
	if f == nil {
		t.Fatal("no key request")
	}
	if f.URL != "http://helper.test/helper/v1/key" || f.Timeout < 5*time.Second {
		t.Fatalf("key request to %s with a timeout of %v", f.URL, f.Timeout)
	}
	rec := httptest.NewRecorder()
	h.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/helper/v1/key", nil))
	return rec.Code, rec.Result().Status, rec.Body.Bytes()
}

// keyView is the admin status's helper_key, failing the test without one.
func keyView(t *testing.T, o *Object) HelperKey {
	t.Helper()
	k := o.AdminView().HelperKey
	if k == nil {
		t.Fatal("the admin status has no helper_key")
	}
	return *k
}

// otherHelper is a helper started with a key the study does not name.
func otherHelper(t *testing.T) (*helper.Helper, *secagg.PrivateKey) {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := helper.New(key, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, key
}

// The object asks for the helper's key when it loads, as serve does at
// its start; the study's own key is reported as such in the admin status
// and the log, and is not asked for again until the next load.
func TestHelperKeyMatches(t *testing.T) {
	x := newSecure(t)
	if k := keyView(t, x.o); k.State != KeyAsking || k.CheckedAt != nil {
		t.Fatalf("before the answer: %+v", k)
	}
	if x.o.Alarm(x.now).KeyFetch != nil {
		t.Fatal("asked again while the first request is out")
	}
	status, text, body := askKey(t, x.h, x.loaded.KeyFetch)
	at := x.now.Add(time.Second)
	fx := x.o.HelperKeyAnswer(status, text, body, at)
	fp := x.key.PublicKey().Fingerprint()
	k := keyView(t, x.o)
	if k.State != KeyMatches || k.StudyFingerprint != fp || k.HelperFingerprint != fp || k.CheckedAt == nil || !k.CheckedAt.Equal(at) ||
		!strings.Contains(k.Words, fp) {
		t.Fatalf("the study's key: %+v", k)
	}
	if !slices.Contains(fx.Log, "INFO "+k.Words) {
		t.Errorf("log %q lacks the words %q", fx.Log, k.Words)
	}
	if x.o.Alarm(at.Add(time.Hour)).KeyFetch != nil {
		t.Error("a matching key is asked for again")
	}
	if fx := x.o.HelperKeyAnswer(status, text, body, at); len(fx.Log) != 1 || !strings.Contains(fx.Log[0], "not awaited") {
		t.Errorf("an answer not awaited: log %q", fx.Log)
	}
	b, _ := json.Marshal(x.o.AdminView())
	if !strings.Contains(string(b), `"helper_key":{"state":"matches","checked_at":`) {
		t.Errorf("admin status JSON: %s", b)
	}
	x.open(t, x.states[len(x.states)-1], nil)
	if x.loaded.KeyFetch == nil || keyView(t, x.o).State != KeyAsking {
		t.Errorf("reloaded: key request %v, state %s", x.loaded.KeyFetch, keyView(t, x.o).State)
	}
}

// A helper with another key refuses every round. A Worker cannot refuse
// to start, so the admin status and the log say so, naming both
// fingerprints and what to do, while the schedule goes on (an abandoned
// round spends nothing); the key is asked for again a minute later.
func TestHelperKeyDiffers(t *testing.T) {
	x := newSecure(t)
	other, key := otherHelper(t)
	status, text, body := askKey(t, other, x.loaded.KeyFetch)
	fx := x.o.HelperKeyAnswer(status, text, body, x.now)
	k := keyView(t, x.o)
	want, got := x.key.PublicKey().Fingerprint(), key.PublicKey().Fingerprint()
	if k.State != KeyDiffers || k.StudyFingerprint != want || k.HelperFingerprint != got {
		t.Fatalf("another key: %+v", k)
	}
	for _, w := range []string{"the helper at http://helper.test/ has the key " + got, "but the study file names the key " + want,
		"refuses every round", "Start the helper with the key the study names", "fedcast study new --helper-key"} {
		if !strings.Contains(k.Words, w) {
			t.Errorf("words lack %q: %s", w, k.Words)
		}
	}
	if !slices.Contains(fx.Log, "WARN "+k.Words) {
		t.Errorf("log %q lacks the words", fx.Log)
	}
	x.report(t, 1) // round 1 is open and takes reports
	if x.o.Alarm(x.now.Add(keyRetry-time.Second)).KeyFetch != nil {
		t.Error("asked again within a minute")
	}
	if x.o.Alarm(x.now.Add(keyRetry)).KeyFetch == nil {
		t.Error("not asked again a minute later")
	}
}

// A helper that does not answer is asked again at a tick a minute or
// more later, until it answers; the log says each change once.
func TestHelperKeyNoAnswerThenMatches(t *testing.T) {
	x := newSecure(t)
	at := x.now
	fx := x.o.HelperKeyAnswer(0, "connection refused", nil, at)
	k := keyView(t, x.o)
	if k.State != KeyNoAnswer || k.HelperFingerprint != "" ||
		!strings.HasPrefix(k.Words, "the helper at http://helper.test/ cannot be reached (connection refused). ") || !strings.Contains(k.Words, "fedcast helper serve") {
		t.Fatalf("no answer: %+v", k)
	}
	if !slices.Contains(fx.Log, "WARN "+k.Words) {
		t.Errorf("log %q lacks the words", fx.Log)
	}
	if x.o.Alarm(at.Add(30*time.Second)).KeyFetch != nil {
		t.Error("asked again within a minute")
	}
	at = at.Add(keyRetry)
	if x.o.Alarm(at).KeyFetch == nil {
		t.Fatal("not asked again a minute later")
	}
	if fx = x.o.HelperKeyAnswer(0, "connection refused", nil, at); len(fx.Log) != 0 || !keyView(t, x.o).CheckedAt.Equal(at) {
		t.Errorf("the same outcome again: log %q, checked at %v", fx.Log, keyView(t, x.o).CheckedAt)
	}
	at = at.Add(keyRetry)
	f := x.o.Alarm(at).KeyFetch
	status, text, body := askKey(t, x.h, f)
	fx = x.o.HelperKeyAnswer(status, text, body, at)
	if k = keyView(t, x.o); k.State != KeyMatches || len(fx.Log) != 1 || fx.Log[0] != "INFO "+k.Words {
		t.Fatalf("the helper answers at last: %+v, log %q", k, fx.Log)
	}
}

// A study without a helper asks for no key and has no helper_key.
func TestNoHelperNoKeyCheck(t *testing.T) {
	raw, _ := newStudy(t, 2)
	o, fx, err := New(raw, nil, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o.AdminView())
	if fx.KeyFetch != nil || strings.Contains(string(b), "helper_key") {
		t.Fatalf("key request %v; admin status %s", fx.KeyFetch, b)
	}
	if fx := o.HelperKeyAnswer(200, "200 OK", nil, t0); len(fx.Log) != 1 || !strings.Contains(fx.Log[0], "not awaited") {
		t.Errorf("an answer without a helper: log %q", fx.Log)
	}
}
