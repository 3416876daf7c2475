package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// traffic is everything the page sent: websocket frames and HTTP
// requests, as Chromium's DevTools network events report them.
type traffic struct {
	mu       sync.Mutex
	frames   []sentFrame
	requests []sentRequest
	// handshakes are the websocket handshakes' Sec-WebSocket-Protocol
	// headers (where the join token travels), as requests with that body.
	handshakes []sentRequest
}

type sentFrame struct {
	Opcode  float64 // 1 text, 2 binary
	Payload []byte
}

type sentRequest struct {
	Method, URL string
	Body        []byte
}

// capture subscribes to the tab's outgoing network traffic. Call it before
// navigating.
func capture(ctx context.Context) *traffic {
	tr := &traffic{}
	frames := chromedp.Events(ctx, network.WebSocketFrameSent)
	reqs := chromedp.Events(ctx, network.RequestWillBeSent)
	hs := chromedp.Events(ctx, network.WebSocketWillSendHandshakeRequest)
	go func() {
		for ev, err := range hs {
			if err != nil {
				return
			}
			if ev.Request == nil {
				continue
			}
			var proto string
			for k, v := range ev.Request.Headers {
				if strings.EqualFold(k, "Sec-WebSocket-Protocol") {
					proto = fmt.Sprint(v)
				}
			}
			tr.mu.Lock()
			tr.handshakes = append(tr.handshakes, sentRequest{Method: "websocket handshake", Body: []byte(proto)})
			tr.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range frames {
			if err != nil {
				return
			}
			if ev.Response == nil {
				continue
			}
			tr.mu.Lock()
			tr.frames = append(tr.frames, sentFrame{Opcode: ev.Response.Opcode, Payload: ev.Response.PayloadData})
			tr.mu.Unlock()
		}
	}()
	go func() {
		for ev, err := range reqs {
			if err != nil {
				return
			}
			if ev.Request == nil {
				continue
			}
			r := sentRequest{Method: ev.Request.Method, URL: ev.Request.URL}
			for _, e := range ev.Request.PostDataEntries {
				r.Body = append(r.Body, e.Bytes...)
			}
			tr.mu.Lock()
			tr.requests = append(tr.requests, r)
			tr.mu.Unlock()
		}
	}()
	return tr
}

func (tr *traffic) snapshot() ([]sentFrame, []sentRequest) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]sentFrame(nil), tr.frames...), append([]sentRequest(nil), tr.requests...)
}

// handshakesSeen returns the websocket handshakes' subprotocol headers.
func (tr *traffic) handshakesSeen() []sentRequest {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]sentRequest(nil), tr.handshakes...)
}

// secrets is what must never leave the browser: the CSV's data rows as
// written, its area names, and its row count.
type secrets struct {
	Rows     []string
	Names    []string
	RowCount int
}

// secretsOf reads a CSV fixture.
func secretsOf(t testing.TB, path string) secrets {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s secrets
	names := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 || line == "" {
			continue
		}
		s.Rows = append(s.Rows, line)
		if f := strings.Split(line, ","); len(f) == 3 && !names[f[1]] {
			names[f[1]] = true
			s.Names = append(s.Names, f[1])
		}
	}
	s.RowCount = len(s.Rows)
	return s
}

// leaks lists every outgoing frame or request that carries one of the
// secrets: a raw row or an area name anywhere in its bytes; the row count
// as a JSON number or string in a text frame, as a path segment or query
// value of a URL, as a field of a binary frame's header or metadata, or as
// one of its float64 weights.
func (s secrets) leaks(frames []sentFrame, reqs []sentRequest) []string {
	var out []string
	count := strconv.Itoa(s.RowCount)
	hasRaw := func(b []byte) string {
		for _, r := range s.Rows {
			if bytes.Contains(b, []byte(r)) {
				return "raw row " + strconv.Quote(r)
			}
		}
		for _, n := range s.Names {
			if bytes.Contains(b, []byte(n)) {
				return "area name " + strconv.Quote(n)
			}
		}
		return ""
	}
	for i, f := range frames {
		if w := hasRaw(f.Payload); w != "" {
			out = append(out, fmt.Sprintf("websocket frame %d: %s", i, w))
			continue
		}
		if f.Opcode == 1 {
			if jsonHas(f.Payload, float64(s.RowCount), count) {
				out = append(out, fmt.Sprintf("websocket text frame %d: the row count %d", i, s.RowCount))
			}
			continue
		}
		if w := binaryHas(f.Payload, s.RowCount); w != "" {
			out = append(out, fmt.Sprintf("websocket binary frame %d: %s", i, w))
		}
	}
	for i, r := range reqs {
		if w := hasRaw([]byte(r.URL)); w != "" {
			out = append(out, fmt.Sprintf("request %d %s %s: %s in the URL", i, r.Method, r.URL, w))
		}
		if w := hasRaw(r.Body); w != "" {
			out = append(out, fmt.Sprintf("request %d %s %s: %s in the body", i, r.Method, r.URL, w))
		}
		if u, err := url.Parse(r.URL); err == nil {
			hit := false
			for _, seg := range strings.Split(u.Path, "/") {
				hit = hit || seg == count
			}
			for _, vs := range u.Query() {
				for _, v := range vs {
					hit = hit || v == count
				}
			}
			if hit {
				out = append(out, fmt.Sprintf("request %d %s %s: the row count %d in the URL", i, r.Method, r.URL, s.RowCount))
			}
		}
		if len(r.Body) > 0 && jsonHas(r.Body, float64(s.RowCount), count) {
			out = append(out, fmt.Sprintf("request %d %s %s: the row count in the body", i, r.Method, r.URL))
		}
	}
	return out
}

// jsonHas reports whether the JSON document b holds the number n or the
// string str anywhere (not a JSON document: whether str appears as a
// whole token).
func jsonHas(b []byte, n float64, str string) bool {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		for _, tok := range strings.FieldsFunc(string(b), func(r rune) bool { return r < '0' || r > '9' }) {
			if tok == str {
				return true
			}
		}
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case float64:
			return v == n
		case string:
			return v == str
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		case map[string]any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// binaryHas checks a binary protocol frame (layout in shared/protocol):
// header fields, JSON metadata and float64 weights.
func binaryHas(b []byte, count int) string {
	if len(b) < 48 || b[0] != 'f' || b[1] != 'c' {
		return "" // not a protocol frame; raw bytes were checked already
	}
	round := binary.LittleEndian.Uint32(b[4:])
	n := binary.LittleEndian.Uint32(b[8:])
	l := binary.LittleEndian.Uint32(b[12:])
	if int(n) == count {
		return fmt.Sprintf("the weight count field equals the row count %d", count)
	}
	if int(round) == count {
		return fmt.Sprintf("the round field equals the row count %d", count)
	}
	if 48+int(l) > len(b) {
		return "malformed metadata length"
	}
	if meta := b[48 : 48+l]; len(meta) > 0 && jsonHas(meta, float64(count), strconv.Itoa(count)) {
		return "the row count in the metadata"
	}
	for off := 48 + int(l); off+8 <= len(b); off += 8 {
		if math.Float64frombits(binary.LittleEndian.Uint64(b[off:])) == float64(count) {
			return fmt.Sprintf("a weight equal to the row count %d", count)
		}
	}
	return ""
}

func TestLeakCheckerUnit(t *testing.T) {
	s := secrets{Rows: []string{"2020-10-01,Northfield,7"}, Names: []string{"Northfield"}, RowCount: 184}
	bin := func(round, n uint32, meta string, w ...float64) []byte {
		b := make([]byte, 48+len(meta)+8*len(w))
		copy(b, "fc\x01\x04")
		binary.LittleEndian.PutUint32(b[4:], round)
		binary.LittleEndian.PutUint32(b[8:], n)
		binary.LittleEndian.PutUint32(b[12:], uint32(len(meta)))
		copy(b[48:], meta)
		for i, x := range w {
			binary.LittleEndian.PutUint64(b[48+len(meta)+8*i:], math.Float64bits(x))
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		frames []sentFrame
		reqs   []sentRequest
		leak   bool
	}{
		{"hello", []sentFrame{{1, []byte(`{"v":1,"type":"hello","token":"a184b"}`)}}, nil, false},
		{"update", []sentFrame{{2, bin(3, 3, "", 0.1, -0.2, 0.3)}}, nil, false},
		{"page loads", nil, []sentRequest{{"GET", "http://h/join", nil}, {"GET", "http://h/main.wasm", nil}}, false},
		{"raw row in text", []sentFrame{{1, []byte("x 2020-10-01,Northfield,7 y")}}, nil, true},
		{"area name in binary", []sentFrame{{2, append(bin(1, 0, ""), "Northfield"...)}}, nil, true},
		{"count in JSON", []sentFrame{{1, []byte(`{"type":"hello","rows":184}`)}}, nil, true},
		{"count as JSON string", []sentFrame{{1, []byte(`{"n":"184"}`)}}, nil, true},
		{"count as n", []sentFrame{{2, bin(1, 184, "")}}, nil, true},
		{"count in metadata", []sentFrame{{2, bin(1, 0, `{"rows":184}`)}}, nil, true},
		{"count as a weight", []sentFrame{{2, bin(1, 2, "", 0.1, 184)}}, nil, true},
		{"count in query", nil, []sentRequest{{"GET", "http://h/api/status?n=184", nil}}, true},
		{"count in path", nil, []sentRequest{{"GET", "http://h/x/184", nil}}, true},
		{"row in body", nil, []sentRequest{{"POST", "http://h/x", []byte("2020-10-01,Northfield,7")}}, true},
	} {
		got := s.leaks(tc.frames, tc.reqs)
		if (len(got) > 0) != tc.leak {
			t.Errorf("%s: leaks %q, want leak=%v", tc.name, got, tc.leak)
		}
	}
}
