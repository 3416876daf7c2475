package protocol

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleMessages() []Message {
	w := []float64{0, -0.5, 1e-300, 3.25, -7}
	t0 := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(4*time.Minute), t0.Add(4*time.Minute+54*time.Second), t0.Add(5*time.Minute)
	return []Message{
		&Hello{Token: "tok_ABC-123"},
		&Welcome{
			Study: Study{Protocol: Version, Clients: 400,
				SampleRate: 0.25, NoiseMultiplier: 4.88,
				Layers: []int{10, 128, 64, 32, 1}, Params: 11777,
				Settings: Settings{Name: "demo", Epsilon: 2, Delta: 1e-5, Rounds: 75,
					ExpectedClients: 100, ClipNorm: 0.5, LocalEpochs: 30,
					LearningRate: 0.001, History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9,
					From: "2020-11-01", To: "2020-12-01",
					RoundLength: Duration(60000 * time.Millisecond), RoundSlack: Duration(6000 * time.Millisecond),
					Hidden: []int{128, 64, 32}}},
			LHA:      "Kreis A",
			State:    StateRunning,
			Schedule: &Schedule{Start: &t0, RoundLength: Duration(time.Minute), RoundSlack: Duration(6 * time.Second), Round: 5, Opens: &t1, TrainBy: &t2, Release: &t3},
			Log:      []Event{{Round: 1, SampleRate: 0.25, NoiseMultiplier: 4.88, Epsilon: 0.21, Delta: 1e-5, ModelSHA256: "ab"}},
		},
		&RoundStart{Round: 3, TimeLeft: 1500 * time.Millisecond, Picked: true, Weights: w},
		&RoundStart{Round: 3, TimeLeft: 1500 * time.Millisecond, Weights: w},
		&Update{Round: 3, Weights: w},
		&Update{Round: 3, Dummy: true, Weights: make([]float64, len(w))},
		&Update{Round: 0, Weights: []float64{}},
		&Accepted{Round: 3},
		&RoundResult{Event: Event{Round: 3, SampleRate: 0.25, NoiseMultiplier: 4.88, Epsilon: 0.4, Delta: 1e-5, ModelSHA256: HashHex(w)}, Weights: w},
		&RoundResult{Event: Event{Round: 4, SampleRate: 0.25, NoiseMultiplier: 4.88, Epsilon: 0.5, Delta: 1e-5, ModelSHA256: HashHex(w)}, Weights: w,
			Schedule: &Schedule{Start: &t0, RoundLength: Duration(time.Minute), RoundSlack: Duration(6 * time.Second), Round: 5, Opens: &t1, TrainBy: &t2, Release: &t3}},
		&Finished{Rounds: 75, Epsilon: 1.99, Reason: "rounds", ModelSHA256: HashHex(w)},
		&Error{Code: CodeStaleRound, Message: "round 2 is closed", Round: 2},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		k, b, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode(%s): %v", m.Type(), err)
		}
		if k != m.Type().Kind() {
			t.Errorf("%s encoded as %s, want %s", m.Type(), k, m.Type().Kind())
		}
		got, err := Decode(k, b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", m.Type(), err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s round trip:\n got %#v\nwant %#v", m.Type(), got, m)
		}
	}
}

func TestBinaryLayout(t *testing.T) {
	w := []float64{1, -2}
	_, b, err := Encode(&Update{Round: 258, Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != HeaderSize+updateMetaSize+16 {
		t.Fatalf("update frame is %d bytes, want %d", len(b), HeaderSize+updateMetaSize+16)
	}
	if string(b[:2]) != "fc" || b[2] != Version || Type(b[3]) != TypeUpdate {
		t.Errorf("header starts % x", b[:4])
	}
	if r := binary.LittleEndian.Uint32(b[4:]); r != 258 {
		t.Errorf("round field %d", r)
	}
	if n := binary.LittleEndian.Uint32(b[8:]); n != 2 {
		t.Errorf("count field %d", n)
	}
	if l := binary.LittleEndian.Uint32(b[12:]); int(l) != updateMetaSize || string(b[HeaderSize:HeaderSize+l]) != `{"dummy":0}` {
		t.Errorf("update metadata %q", b[HeaderSize:HeaderSize+l])
	}
	sum := HashWeights(w)
	if string(b[16:48]) != string(sum[:]) {
		t.Error("hash field is not HashWeights")
	}
	if v := math.Float64frombits(binary.LittleEndian.Uint64(b[HeaderSize+updateMetaSize+8:])); v != -2 {
		t.Errorf("second weight %v", v)
	}
	if FrameSize(2) < int64(len(b)) {
		t.Errorf("FrameSize(2)=%d below the frame's %d bytes", FrameSize(2), len(b))
	}
}

// frame returns a valid update frame then lets mutate change it.
// updateMetaSize is the length of an update's metadata, real or dummy.
const updateMetaSize = len(`{"dummy":0}`)

func frame(t *testing.T, mutate func(b []byte) []byte) []byte {
	t.Helper()
	_, b, err := Encode(&Update{Round: 1, Weights: []float64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	return mutate(b)
}

func TestDecodeRejects(t *testing.T) {
	nan := frame(t, func(b []byte) []byte {
		binary.LittleEndian.PutUint64(b[HeaderSize+updateMetaSize:], math.Float64bits(math.NaN()))
		return b
	})
	// fix the hash so that only the NaN is wrong
	// fixHash recomputes the frame's hash so that only the weights are wrong.
	fixHash := func(b []byte) []byte {
		l := binary.LittleEndian.Uint32(b[12:])
		h := hashRaw(b[HeaderSize+int(l):])
		copy(b[16:48], h[:])
		return b
	}
	cases := []struct {
		name string
		kind Kind
		b    []byte
		want error
	}{
		{"empty binary", Binary, nil, ErrMalformed},
		{"short header", Binary, make([]byte, 47), ErrMalformed},
		{"bad magic", Binary, frame(t, func(b []byte) []byte { b[0] = 'x'; return b }), ErrMalformed},
		{"version", Binary, frame(t, func(b []byte) []byte { b[2] = 9; return b }), ErrVersion},
		{"text type in binary", Binary, frame(t, func(b []byte) []byte { b[3] = byte(TypeHello); return b }), ErrMalformed},
		{"unknown type", Binary, frame(t, func(b []byte) []byte { b[3] = 200; return b }), ErrMalformed},
		{"truncated", Binary, frame(t, func(b []byte) []byte { return b[:len(b)-1] }), ErrMalformed},
		{"trailing byte", Binary, frame(t, func(b []byte) []byte { return append(b, 0) }), ErrMalformed},
		{"count too large", Binary, frame(t, func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], MaxWeights+1); return b }), ErrTooLarge},
		{"meta too large", Binary, frame(t, func(b []byte) []byte { binary.LittleEndian.PutUint32(b[12:], MaxMeta+1); return b }), ErrTooLarge},
		{"hash mismatch", Binary, frame(t, func(b []byte) []byte { b[HeaderSize+updateMetaSize] ^= 1; return b }), ErrMalformed},
		{"NaN weight", Binary, fixHash(nan), ErrNotFinite},
		{"Inf weight", Binary, fixHash(frame(t, func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[HeaderSize+updateMetaSize+8:], math.Float64bits(math.Inf(-1)))
			return b
		})), ErrNotFinite},
		{"dummy flag of two digits", Binary, func() []byte {
			b, _ := encodeBinary(TypeUpdate, 1, []byte(`{"dummy":10}`), []float64{1})
			return b
		}(), ErrMalformed},
		{"round_start picked 2", Binary, func() []byte {
			b, _ := encodeBinary(TypeRoundStart, 1, []byte(`{"time_left_ms":5,"picked":2}`), []float64{1})
			return b
		}(), ErrMalformed},
		{"update with metadata", Binary, func() []byte {
			b, _ := encodeBinary(TypeUpdate, 1, []byte(`{"rows":12}`), []float64{1})
			return b
		}(), ErrMalformed},
		{"round_result unknown field", Binary, func() []byte {
			b, _ := encodeBinary(TypeRoundResult, 1, []byte(`{"round":1,"participants":7}`), []float64{1})
			return b
		}(), ErrMalformed},
		{"round_result round mismatch", Binary, func() []byte {
			b, _ := encodeBinary(TypeRoundResult, 2, []byte(`{"round":1}`), []float64{1})
			return b
		}(), ErrMalformed},
		{"empty text", Text, nil, ErrMalformed},
		{"not json", Text, []byte("hello"), ErrMalformed},
		{"no version", Text, []byte(`{"type":"hello","token":"x"}`), ErrMalformed},
		{"text version", Text, []byte(`{"v":2,"type":"hello","token":"x"}`), ErrVersion},
		{"binary type in text", Text, []byte(`{"v":1,"type":"update"}`), ErrMalformed},
		{"unknown text type", Text, []byte(`{"v":1,"type":"rows"}`), ErrMalformed},
		{"empty token", Text, []byte(`{"v":1,"type":"hello","token":""}`), ErrMalformed},
		{"long token", Text, []byte(`{"v":1,"type":"hello","token":"` + strings.Repeat("a", MaxToken+1) + `"}`), ErrMalformed},
		{"bad state", Text, []byte(`{"v":1,"type":"welcome","state":"paused"}`), ErrMalformed},
		{"negative round", Text, []byte(`{"v":1,"type":"accepted","round":-1}`), ErrMalformed},
		{"huge round", Text, []byte(`{"v":1,"type":"accepted","round":4294967296}`), ErrMalformed},
		{"wrong field type", Text, []byte(`{"v":1,"type":"hello","token":7}`), ErrMalformed},
		{"too large text", Text, []byte(`{"v":1,"type":"hello","token":"` + strings.Repeat(" ", MaxText) + `"}`), ErrTooLarge},
		{"unknown kind", 7, []byte(`{}`), ErrMalformed},
	}
	for _, c := range cases {
		m, err := Decode(c.kind, c.b)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Decode = %v, %v; want error %v", c.name, m, err, c.want)
		}
	}
}

func hashRaw(p []byte) [32]byte {
	w := make([]float64, len(p)/8)
	for i := range w {
		w[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return HashWeights(w)
}

func TestEncodeRejects(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		want error
	}{
		{"NaN weight", &Update{Round: 1, Weights: []float64{math.NaN()}}, ErrNotFinite},
		{"negative round", &Update{Round: -1, Weights: []float64{1}}, ErrMalformed},
		{"round overflow", &RoundStart{Round: MaxRound + 1}, ErrMalformed},
		{"too many weights", &Update{Round: 1, Weights: make([]float64, MaxWeights+1)}, ErrTooLarge},
		{"empty hello", &Hello{}, ErrMalformed},
		{"nil", nil, ErrMalformed},
	}
	for _, c := range cases {
		if _, _, err := Encode(c.m); !errors.Is(err, c.want) {
			t.Errorf("%s: Encode error %v, want %v", c.name, err, c.want)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	for c := CodeBadFrame; c <= CodeHelloExpected; c++ {
		if strings.HasPrefix(c.String(), "code(") {
			t.Errorf("code %d has no name", int(c))
		}
	}
	e := &Error{Code: CodeUnauthorized, Message: "unknown token"}
	var pe *Error
	if !errors.As(error(e), &pe) || pe.Code != CodeUnauthorized {
		t.Error("errors.As does not find *Error")
	}
	if CodeStaleRound.Fatal() || !CodeReplaced.Fatal() {
		t.Error("Fatal table wrong")
	}
}

func TestHashWeightsChunking(t *testing.T) {
	// The chunked hash must equal hashing the frame payload in one piece.
	w := make([]float64, 1500)
	for i := range w {
		w[i] = float64(i) * 0.37
	}
	_, b, err := Encode(&Update{Round: 1, Weights: w})
	if err != nil {
		t.Fatal(err)
	}
	sum := HashWeights(w)
	if string(b[16:48]) != string(sum[:]) {
		t.Error("HashWeights differs from the frame's SHA-256 for 1500 weights")
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		k, b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(k), b)
	}
	f.Add(uint8(Text), []byte(`{"v":1,"type":"error","code":3,"message":"x"}`))
	f.Add(uint8(Binary), make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		m, err := Decode(Kind(kind), b)
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned a message and an error: %v", err)
			}
			return
		}
		k2, b2, err := Encode(m)
		if err != nil {
			t.Fatalf("decoded %s does not encode: %v", m.Type(), err)
		}
		m2, err := Decode(k2, b2)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", m.Type(), err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("decode→encode→decode differs:\n%#v\n%#v", m, m2)
		}
	})
}

// TestReadyMessage: ready is text type 9 and carries nothing but its type.
func TestReadyMessage(t *testing.T) {
	k, b, err := Encode(&Ready{})
	if err != nil || k != Text || string(b) != `{"v":1,"type":"ready"}` {
		t.Fatalf("Encode(ready) = %v %q %v", k, b, err)
	}
	if m, err := Decode(Text, b); err != nil || m.Type() != TypeReady || TypeReady != 9 || TypeReady.Kind() != Text {
		t.Fatalf("Decode: %v %v", m, err)
	}
}
