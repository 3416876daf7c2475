package protocol

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSameSizes: what an observer of the wire sees of a round_start and
// of an answer does not depend on being picked.
func TestSameSizes(t *testing.T) {
	w := make([]float64, 11777)
	for i := range w {
		w[i] = float64(i) / 7
	}
	for _, left := range []time.Duration{0, 9 * time.Millisecond, 1500 * time.Millisecond, 54 * time.Second} {
		_, a, err := Encode(&RoundStart{Round: 7, TimeLeft: left, Picked: true, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		_, b, err := Encode(&RoundStart{Round: 7, TimeLeft: left, Picked: false, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Errorf("time left %v: round_start is %d bytes picked, %d not picked", left, len(a), len(b))
		}
	}
	_, real, err := Encode(&Update{Round: 7, Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	_, dummy, err := Encode(&Update{Round: 7, Dummy: true, Weights: make([]float64, len(w))})
	if err != nil {
		t.Fatal(err)
	}
	if len(real) != len(dummy) {
		t.Errorf("update %d bytes, dummy %d", len(real), len(dummy))
	}
	m, err := Decode(Binary, dummy)
	if u, ok := m.(*Update); err != nil || !ok || !u.Dummy {
		t.Errorf("dummy decodes as %#v, %v", m, err)
	}
}

// TestOldFramesDecode: an update without metadata (clients before
// dummies) is real; a round_start without "picked" (coordinators that
// sent it to the sampled only) is picked.
func TestOldFramesDecode(t *testing.T) {
	b, _ := encodeBinary(TypeUpdate, 2, nil, []float64{1})
	if m, err := Decode(Binary, b); err != nil || m.(*Update).Dummy {
		t.Errorf("update without metadata: %#v, %v", m, err)
	}
	b, _ = encodeBinary(TypeRoundStart, 2, []byte(`{"time_left_ms":5}`), []float64{1})
	if m, err := Decode(Binary, b); err != nil || !m.(*RoundStart).Picked {
		t.Errorf("round_start without picked: %#v, %v", m, err)
	}
	if l := binary.LittleEndian.Uint32(b[12:]); l == 0 {
		t.Error("no metadata written")
	}
}

func TestParseAuth(t *testing.T) {
	tok := "k3Q_x-9aZ"
	ps := Subprotocols(tok)
	long := Subprotocols(strings.Repeat("t", MaxToken+1))[1]
	cases := []struct {
		name   string
		header []string
		token  string
		err    error
	}{
		{"two values", ps, tok, nil},
		{"one list", []string{strings.Join(ps, ", ")}, tok, nil},
		{"auth first", []string{ps[1] + "," + ps[0]}, tok, nil},
		{"none", nil, "", ErrNoToken},
		{"version only", []string{Subprotocol}, "", ErrNoToken},
		{"no version", []string{ps[1]}, "", ErrVersion},
		{"other version", []string{"fedcast.v9", ps[1]}, "", ErrVersion},
		{"bad base64", []string{Subprotocol, AuthPrefix + "a+b="}, "", ErrMalformed},
		{"empty token", []string{Subprotocol, AuthPrefix}, "", ErrMalformed},
		{"too long", []string{Subprotocol, long}, "", ErrMalformed},
		{"twice", []string{ps[0], ps[1], Subprotocols("other")[1]}, "", ErrMalformed},
	}
	for _, c := range cases {
		got, err := ParseAuth(c.header)
		if got != c.token || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: ParseAuth(%q) = %q, %v; want %q, %v", c.name, c.header, got, err, c.token, c.err)
		}
	}
	// Every value is an HTTP token (RFC 9110 tchar): a browser's
	// WebSocket accepts it as a subprotocol.
	for _, p := range Subprotocols("a token with spaces/and ünïcode") {
		for _, r := range p {
			if !strings.ContainsRune("!#$%&'*+-.^_`|~", r) && !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
				t.Errorf("subprotocol %q has %q, not a token character", p, r)
			}
		}
	}
}

func TestAnswerAfter(t *testing.T) {
	for _, c := range []struct{ left, want time.Duration }{
		{0, 0},
		{-time.Second, 0},
		{time.Second, 800 * time.Millisecond},
		{10 * time.Second, 8 * time.Second},
		{54 * time.Second, 49 * time.Second},
		{10 * time.Minute, 10*time.Minute - AnswerMargin},
	} {
		if got := AnswerAfter(c.left); got != c.want {
			t.Errorf("AnswerAfter(%v) = %v, want %v", c.left, got, c.want)
		}
	}
}

func FuzzParseAuth(f *testing.F) {
	f.Add(strings.Join(Subprotocols("tok"), ","))
	f.Add("fedcast.v1, fedcast.auth.%%%")
	f.Fuzz(func(t *testing.T, h string) {
		tok, err := ParseAuth([]string{h})
		if err == nil && (tok == "" || len(tok) > MaxToken) {
			t.Fatalf("ParseAuth(%q) = %q without error", h, tok)
		}
	})
}

func TestPeekDummy(t *testing.T) {
	_, d, _ := Encode(&Update{Round: 9, Dummy: true, Weights: make([]float64, 5)})
	_, u, _ := Encode(&Update{Round: 9, Weights: make([]float64, 5)})
	_, rs, _ := Encode(&RoundStart{Round: 9, Picked: true, Weights: make([]float64, 5)})
	if r, ok := PeekDummy(d); !ok || r != 9 {
		t.Errorf("dummy: %d, %v", r, ok)
	}
	if len(updateMeta[1]) != DummyHead-HeaderSize {
		t.Error("DummyHead does not cover the dummy's metadata")
	}
	for name, b := range map[string][]byte{"update": u, "round_start": rs, "truncated dummy": d[:len(d)-1], "dummy head only": d[:DummyHead], "empty": nil} {
		if _, ok := PeekDummy(b); ok {
			t.Errorf("%s taken for a dummy", name)
		}
	}
}

// A forecast-only visit offers the join token and ForecastOnly: ParseAuth
// reads the token as for a join, and only IsForecastOnly tells them apart.
func TestForecastOnly(t *testing.T) {
	ps := ForecastSubprotocols("tok")
	if tok, err := ParseAuth(ps); err != nil || tok != "tok" {
		t.Errorf("ParseAuth(%q) = %q, %v", ps, tok, err)
	}
	for _, c := range []struct {
		header []string
		want   bool
	}{
		{ps, true},
		{[]string{strings.Join(ps, ", ")}, true},
		{[]string{ForecastOnly + " ," + Subprotocol}, true},
		{Subprotocols("tok"), false},
		{[]string{ForecastOnly + "x, " + Subprotocol}, false},
		{nil, false},
	} {
		if got := IsForecastOnly(c.header); got != c.want {
			t.Errorf("IsForecastOnly(%q) = %v, want %v", c.header, got, c.want)
		}
	}
}
