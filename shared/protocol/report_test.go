package protocol

import (
	"bytes"
	"errors"
	"testing"
)

func TestReportFrame(t *testing.T) {
	body := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 0xff}, 30)
	k, b, err := Encode(&Report{Round: 7, Body: body})
	if err != nil || k != Binary {
		t.Fatal(k, err)
	}
	if len(b) != HeaderSize+len(body) {
		t.Fatalf("frame of %d bytes, want %d", len(b), HeaderSize+len(body))
	}
	m, err := Decode(Binary, b)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := m.(*Report)
	if !ok || r.Round != 7 || !bytes.Equal(r.Body, body) {
		t.Fatalf("decoded %#v", m)
	}
	b[HeaderSize+3] ^= 1
	if _, err := Decode(Binary, b); !errors.Is(err, ErrMalformed) {
		t.Errorf("altered payload: %v", err)
	}
	if _, _, err := Encode(&Report{Round: 1, Body: []byte{1, 2, 3}}); !errors.Is(err, ErrMalformed) {
		t.Errorf("report of 3 bytes: %v", err)
	}
}
