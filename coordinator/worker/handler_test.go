package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/coordinator/worker/object"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func initEnvelope(t *testing.T, blobs ...[]byte) []byte {
	t.Helper()
	b, err := object.EncodeEnvelope(map[string]int64{"now": now.UnixMilli()}, blobs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHandler(t *testing.T) (*handler, *study.Secrets) {
	t.Helper()
	h, sec, fx := initHandler(t, study.File{Settings: protocol.Settings{Epsilon: 4, Rounds: 2,
		ExpectedClients: 2, Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second)}})
	if fx.State == nil {
		t.Fatal("init: no state")
	}
	return h, sec
}

// initHandler opens a handler on a study of two LHAs, A and B, made from
// template, and returns the init call's effects.
func initHandler(t *testing.T, template study.File) (*handler, *study.Secrets, *object.Effects) {
	t.Helper()
	f, sec, err := study.Create(study.CreateOptions{Names: []string{"A", "B"}, Template: template})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h := &handler{}
	out, err := h.Do(Request{Op: "init", Now: now, Data: initEnvelope(t, raw)})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := object.DecodeEffects(out)
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	return h, sec, fx
}

func get(h *handler, path, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestCallsBeforeInitAndBadInit(t *testing.T) {
	h := &handler{}
	if _, err := h.Do(Request{Op: "alarm", Now: now}); err == nil {
		t.Error("an alarm before init was taken")
	}
	if w := get(h, "/api/status", ""); w.Code != http.StatusServiceUnavailable {
		t.Errorf("status before init: %d", w.Code)
	}
	if _, err := h.Do(Request{Op: "init", Now: now, Data: []byte("not an envelope")}); !errors.Is(err, object.ErrEnvelope) {
		t.Errorf("bad envelope: %v", err)
	}
	_, err := h.Do(Request{Op: "init", Now: now, Data: initEnvelope(t, []byte(`{"version":1}`))})
	if err == nil || !strings.Contains(err.Error(), "cannot open the study") {
		t.Errorf("invalid study file: %v", err)
	}
	if w := get(h, "/api/status", ""); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "cannot open the study") {
		t.Errorf("status after a failed init: %d %s", w.Code, w.Body)
	}
}

func TestRoutes(t *testing.T) {
	h, sec := newHandler(t)
	w := get(h, "/api/status", "")
	var st protocol.Status
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &st) != nil || st.State != protocol.StateWaiting || st.Clients != 2 {
		t.Fatalf("status: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/api/admin/status", "/api/admin/model", "/api/admin/state"} {
		if w := get(h, p, ""); w.Code != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d", p, w.Code)
		}
		if w := get(h, p, sec.LHAs[0]); w.Code != http.StatusUnauthorized {
			t.Errorf("%s with an LHA's token: %d", p, w.Code)
		}
		if w := get(h, p, sec.Admin); w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
			t.Errorf("%s with the admin token: %d", p, w.Code)
		}
	}
	var m object.Model
	if err := json.Unmarshal(get(h, "/api/admin/model", sec.Admin).Body.Bytes(), &m); err != nil || m.ModelSHA256 != protocol.HashHex(m.Weights) || m.Round != 0 || m.Final {
		t.Errorf("model: %v %+v", err, m)
	}
	if w := get(h, "/nope", ""); w.Code != http.StatusNotFound {
		t.Errorf("unknown route: %d", w.Code)
	}
	r := httptest.NewRequest(http.MethodPost, "/web/csp", strings.NewReader(`<html><script>go()</script></html>`))
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	if !strings.Contains(rw.Body.String(), "'sha256-") || !strings.Contains(rw.Body.String(), "frame-ancestors 'none'") {
		t.Errorf("csp: %s", rw.Body)
	}
}

func TestConnectRefusesForeignOrigin(t *testing.T) {
	h, sec := newHandler(t)
	_, err := h.Do(Request{Op: "connect", Conn: 1, Now: now, Origin: "https://evil.example", Host: "fedcast.example"})
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("foreign origin: %v", err)
	}
	header := []byte(strings.Join(protocol.Subprotocols(sec.LHAs[0]), ", ")) // the Sec-WebSocket-Protocol header
	out, err := h.Do(Request{Op: "connect", Conn: 2, Now: now, Origin: "https://fedcast.example", Host: "fedcast.example", Data: header})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := object.DecodeEffects(out)
	if err != nil || len(fx.Sends) != 1 || fx.Sends[0].Conn != 2 || !strings.Contains(string(fx.Sends[0].Data), `"welcome"`) {
		t.Fatalf("connect with the token in the handshake: %v %+v", err, fx)
	}
	for i := range study.DefaultMaxFailedAuth {
		if _, err := h.Do(Request{Op: "connect", Conn: 10 + i, Now: now, Addr: "198.51.100.1"}); err != nil {
			t.Fatalf("refusal %d: %v", i+1, err)
		}
	}
	if _, err := h.Do(Request{Op: "connect", Conn: 99, Now: now, Addr: "198.51.100.1"}); !errors.Is(err, ErrTooMany) {
		t.Errorf("past the limit of failed attempts: %v, want ErrTooMany", err)
	}
	if _, err := h.Do(Request{Op: "bogus", Now: now}); err == nil {
		t.Error("an unknown call was taken")
	}
}

// The helper's answer comes back as an envelope ({"round", "status",
// "status_text"} + the body); a malformed one is an error, and one that
// no round awaits changes nothing.
func TestHelperAnswerCall(t *testing.T) {
	h, _ := newHandler(t)
	for _, bad := range [][]byte{nil, []byte("{}"), initEnvelope(t, []byte("a"), []byte("b"))} {
		if _, err := h.Do(Request{Op: "helper", Now: now, Data: bad}); err == nil {
			t.Errorf("helper answer %q accepted", bad)
		}
	}
	b, err := object.EncodeEnvelope(map[string]any{"round": 1, "status": 200, "status_text": "200 OK"}, [][]byte{[]byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := decodeHelperAnswer(b)
	if err != nil || a.Round != 1 || a.Status != 200 || a.StatusText != "200 OK" || string(a.Body) != "{}" {
		t.Fatalf("decoded %+v, %v", a, err)
	}
	out, err := h.Do(Request{Op: "helper", Now: now, Data: b})
	if err != nil {
		t.Fatal(err)
	}
	fx, err := object.DecodeEffects(out)
	if err != nil || fx.State != nil || len(fx.Sends) != 0 || len(fx.Log) != 1 || !strings.Contains(fx.Log[0], "not awaited") {
		t.Fatalf("an answer no round awaits: %+v, %v", fx, err)
	}
}

// POST /api/admin/topup comes in as the "topup" call: the admin token is
// checked (an LHA's token or none: 401, nothing stored), then the object
// tops up (its own rules: coordinator/worker/object TestTopUpOnTheWorker).
func TestTopUpCall(t *testing.T) {
	h, sec := newHandler(t)
	call := func(auth string, body ...[]byte) *object.Effects {
		t.Helper()
		b, err := object.EncodeEnvelope(map[string]string{"authorization": auth}, body)
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Do(Request{Op: "topup", Now: now, Data: b})
		if err != nil {
			t.Fatal(err)
		}
		fx, err := object.DecodeEffects(out)
		if err != nil || fx.Reply == nil {
			t.Fatalf("topup call: %v, reply %v", err, fx != nil && fx.Reply != nil)
		}
		return fx
	}
	body := []byte(`{"epsilon": 6}`)
	for _, auth := range []string{"", "Bearer " + sec.LHAs[0], sec.Admin} {
		if fx := call(auth, body); fx.Reply.Status != http.StatusUnauthorized || fx.State != nil {
			t.Errorf("top-up with authorization %q: %d %s", auth, fx.Reply.Status, fx.Reply.Body)
		}
	}
	if fx := call("Bearer "+sec.Admin, body, body); fx.Reply.Status != http.StatusBadRequest {
		t.Errorf("two bodies: %d %s", fx.Reply.Status, fx.Reply.Body)
	}
	fx := call("Bearer "+sec.Admin, body)
	if fx.Reply.Status != http.StatusOK || fx.State == nil {
		t.Fatalf("top-up with the admin token: %d %s", fx.Reply.Status, fx.Reply.Body)
	}
	if w := get(h, "/api/status", ""); !strings.Contains(w.Body.String(), `"epsilon_budget":6`) {
		t.Errorf("status after the top-up: %s", w.Body)
	}
}

// helperStudy opens a handler on a study whose helper is at url with
// the study key pub, and returns the init call's effects.
func helperStudy(t *testing.T, url string, pub *secagg.PublicKey) (*handler, *study.Secrets, *object.Effects) {
	t.Helper()
	return initHandler(t, study.File{Helper: &study.HelperRef{URL: url, PublicKey: pub.Bytes()},
		Settings: protocol.Settings{Epsilon: 4, Rounds: 2, ExpectedClients: 1, Hidden: []int{4}, RoundLength: study.Duration(10 * time.Second)}})
}

// The helper's key: asked for at init (a KeyFetch effect), answered
// through the "helper_key" call, and reported in GET /api/admin/status.
// No answer, then a minute later another key (both fingerprints in the
// words), then a minute later the study's key.
func TestHelperKeyCall(t *testing.T) {
	studyKey, _ := secagg.GenerateKey()
	otherKey, _ := secagg.GenerateKey()
	h, sec, fx := helperStudy(t, "https://helper.example.org", studyKey.PublicKey())
	if fx.KeyFetch == nil || fx.KeyFetch.URL != "https://helper.example.org/helper/v1/key" {
		t.Fatalf("init asks for the key: %+v", fx.KeyFetch)
	}
	keyBody := func(k *secagg.PrivateKey) []byte {
		b, _ := json.Marshal(map[string]any{"public_key": k.PublicKey().Bytes()})
		return b
	}
	var view struct {
		HelperKey object.HelperKey `json:"helper_key"`
	}
	for i, c := range []struct {
		status int
		body   []byte
		state  object.KeyState
		words  []string
	}{
		{0, nil, object.KeyNoAnswer, []string{"the helper at https://helper.example.org cannot be reached (timed out)"}},
		{200, keyBody(otherKey), object.KeyDiffers, []string{"has the key " + otherKey.PublicKey().Fingerprint(), "names the key " + studyKey.PublicKey().Fingerprint()}},
		{200, keyBody(studyKey), object.KeyMatches, []string{studyKey.PublicKey().Fingerprint()}},
	} {
		at := now.Add(time.Duration(i) * time.Minute)
		if i > 0 {
			out, err := h.Do(Request{Op: "alarm", Now: at})
			if fx, _ = object.DecodeEffects(out); err != nil || fx.KeyFetch == nil {
				t.Fatalf("%s: not asked again a minute later (%v)", c.state, err)
			}
		}
		b, err := object.EncodeEnvelope(map[string]any{"status": c.status, "status_text": "timed out"}, [][]byte{c.body})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Do(Request{Op: "helper_key", Now: at, Data: b}); err != nil {
			t.Fatal(err)
		}
		w := get(h, "/api/admin/status", sec.Admin)
		if err := json.Unmarshal(w.Body.Bytes(), &view); err != nil || view.HelperKey.State != c.state {
			t.Fatalf("%s: admin status %s (%v)", c.state, w.Body, err)
		}
		for _, want := range c.words {
			if !strings.Contains(view.HelperKey.Words, want) {
				t.Errorf("%s: words lack %q: %s", c.state, want, view.HelperKey.Words)
			}
		}
	}
	if _, err := h.Do(Request{Op: "helper_key", Now: now, Data: []byte("{}")}); err == nil {
		t.Error("a malformed key answer was taken")
	}
}
