package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// The forwarded-set record reads back only for its own study, round and
// model size, and never from a truncated or padded record.
func TestForwardedRecord(t *testing.T) {
	key, _ := secagg.GenerateKey()
	const d = 3
	hash := [32]byte{1, 2, 3}
	var set []*secagg.Report
	for lha := range 2 {
		r, err := secagg.NewReport(key.PublicKey(), hash, 4, uint32(lha), []int64{1, -2, 3})
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, r)
	}
	b := EncodeForwarded(hash, 4, set)
	got, ok := DecodeForwarded(b, hash, 4, d)
	if !ok || len(got) != 2 || !bytes.Equal(got[1].Marshal(), set[1].Marshal()) {
		t.Fatalf("round trip: ok %v, %d reports", ok, len(got))
	}
	other := hash
	other[0] = 9
	for name, c := range map[string]struct {
		b     []byte
		hash  [32]byte
		round int
		d     int
	}{
		"another study": {b, other, 4, d}, "another round": {b, hash, 5, d}, "another size": {b, hash, 4, d + 1},
		"truncated": {b[:len(b)-1], hash, 4, d}, "padded": {append(bytes.Clone(b), 0), hash, 4, d}, "empty": {nil, hash, 4, d},
	} {
		if _, ok := DecodeForwarded(c.b, c.hash, c.round, c.d); ok {
			t.Errorf("%s: read back", name)
		}
	}
}

// The helper's answer is checked the same way for serve and the Worker:
// a refusal carries the helper's words, a wrong round or size is refused.
func TestHelperAnswerChecks(t *testing.T) {
	st := &protocol.Study{Params: 2}
	ok := []byte(`{"round":3,"share":"AAAAAAAAAAAAAAAAAAAAAA=="}`)
	if r, err := HelperAnswer(st, 3, 200, "200 OK", ok); err != nil || r.Round != 3 || len(r.Share) != 16 {
		t.Fatalf("a good answer: %+v, %v", r, err)
	}
	for _, c := range []struct {
		status int
		body   string
		words  string
	}{
		{409, `{"error":"round 3 is past the study's budget"}`, "past the study's budget"},
		{502, `<html>`, "502 Bad Gateway"},
		{200, `not json`, "not JSON"},
		{200, `{"round":2,"share":"AAAAAAAAAAAAAAAAAAAAAA=="}`, "want round 3"},
		{200, `{"round":3,"share":"AAAA"}`, "want round 3 with 16"},
	} {
		_, err := HelperAnswer(st, 3, c.status, "502 Bad Gateway", []byte(c.body))
		if !errors.Is(err, ErrHelperUnavailable) || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%d %s: %v", c.status, c.body, err)
		}
	}
}

// The helper's key answer is read the same way for serve and the Worker:
// a key comes back as sent; anything else is an error naming the helper
// and what came instead.
func TestHelperKeyAnswer(t *testing.T) {
	key, _ := secagg.GenerateKey()
	good, _ := json.Marshal(map[string]any{"public_key": key.PublicKey().Bytes(), "fingerprint": key.PublicKey().Fingerprint()})
	if pk, err := HelperKey("http://h.test", 200, "200 OK", good); err != nil || pk.Fingerprint() != key.PublicKey().Fingerprint() {
		t.Fatalf("a good answer: %v, %v", pk, err)
	}
	if HelperKeyURL("http://h.test/") != "http://h.test/helper/v1/key" {
		t.Errorf("key URL %s", HelperKeyURL("http://h.test/"))
	}
	for _, c := range []struct {
		status int
		body   string
		words  string
	}{
		{404, `404 page not found`, "the helper at http://h.test answered 404 Not Found for its key"},
		{200, `<html>`, "is not a helper's"},
		{200, `{"public_key":"AAAA"}`, "the helper at http://h.test answered a key that cannot be read"},
		{200, `{}`, "the helper at http://h.test answered a key that cannot be read"},
	} {
		if _, err := HelperKey("http://h.test", c.status, "404 Not Found", []byte(c.body)); err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%d %s: %v, want %q", c.status, c.body, err, c.words)
		}
	}
}
