package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// FrameSize is the size in bytes of a binary frame carrying n weights and
// at most MaxMeta bytes of metadata: a websocket read limit for a model of
// n parameters.
func FrameSize(n int) int64 {
	return HeaderSize + MaxMeta + 8*int64(n)
}

// Encode returns m's frame kind and bytes. It fails on values the wire
// cannot carry: negative or too large round ids, non-finite weights or
// numbers, too many weights.
func Encode(m Message) (Kind, []byte, error) {
	switch m := m.(type) {
	case *RoundStart:
		meta, err := json.Marshal(roundStartMeta{TimeLeftMillis: m.TimeLeft.Milliseconds(), Picked: digit(m.Picked)})
		if err != nil {
			return 0, nil, fmt.Errorf("protocol: encode round_start: %w", err)
		}
		b, err := encodeBinary(TypeRoundStart, m.Round, meta, m.Weights)
		return Binary, b, err
	case *Update:
		b, err := encodeBinary(TypeUpdate, m.Round, updateMeta[*digit(m.Dummy)], m.Weights)
		return Binary, b, err
	case *Report:
		b, err := encodeReport(m)
		return Binary, b, err
	case *RoundResult:
		ev := m.Event
		ev.ModelSHA256 = ""
		meta, err := json.Marshal(roundResultMeta{Event: ev, Schedule: m.Schedule})
		if err != nil {
			return 0, nil, fmt.Errorf("protocol: encode round_result: %w", err)
		}
		b, err := encodeBinary(TypeRoundResult, m.Event.Round, meta, m.Weights)
		return Binary, b, err
	case *Hello, *Welcome, *Accepted, *Finished, *Error, *Ready:
		b, err := encodeText(m)
		return Text, b, err
	case nil:
		return 0, nil, fmt.Errorf("%w: nil message", ErrMalformed)
	}
	return 0, nil, fmt.Errorf("%w: unknown message %T", ErrMalformed, m)
}

type roundStartMeta struct {
	TimeLeftMillis int64 `json:"time_left_ms"`
	// Picked is 1 or 0 (a number of one digit: the same size either
	// way). Absent (nil on decoding) from coordinators that sent
	// round_start to the sampled LHAs only: picked.
	Picked *int `json:"picked,omitempty"`
}

// updateMeta is an update's metadata, real (0) or dummy (1): the same
// size either way. An update without metadata (clients before dummies)
// is real.
var updateMeta = [2][]byte{[]byte(`{"dummy":0}`), []byte(`{"dummy":1}`)}

// digit returns &1 for true and &0 for false.
func digit(b bool) *int {
	d := 0
	if b {
		d = 1
	}
	return &d
}

func encodeBinary(t Type, round int, meta []byte, w []float64) ([]byte, error) {
	if round < 0 || round > MaxRound {
		return nil, fmt.Errorf("%w: round id %d out of range", ErrMalformed, round)
	}
	if len(w) > MaxWeights {
		return nil, fmt.Errorf("%w: %d weights (max %d)", ErrTooLarge, len(w), MaxWeights)
	}
	if len(meta) > MaxMeta {
		return nil, fmt.Errorf("%w: %d bytes of metadata (max %d)", ErrTooLarge, len(meta), MaxMeta)
	}
	for i, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: weight %d is %v", ErrNotFinite, i, v)
		}
	}
	b := make([]byte, HeaderSize+len(meta)+8*len(w))
	b[0], b[1], b[2], b[3] = 'f', 'c', Version, byte(t)
	binary.LittleEndian.PutUint32(b[4:], uint32(round))
	binary.LittleEndian.PutUint32(b[8:], uint32(len(w)))
	binary.LittleEndian.PutUint32(b[12:], uint32(len(meta)))
	copy(b[HeaderSize:], meta)
	p := b[HeaderSize+len(meta):]
	for i, v := range w {
		binary.LittleEndian.PutUint64(p[8*i:], math.Float64bits(v))
	}
	sum := sha256.Sum256(p)
	copy(b[16:48], sum[:])
	return b, nil
}

func encodeText(m Message) ([]byte, error) {
	if err := validateText(m); err != nil {
		return nil, err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode %s: %w", m.Type(), err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"v":%d,"type":%q`, Version, m.Type().String())
	if len(body) > 2 { // body is a JSON object "{…}"
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	if b.Len() > MaxText {
		return nil, fmt.Errorf("%w: %d byte text frame (max %d)", ErrTooLarge, b.Len(), MaxText)
	}
	return b.Bytes(), nil
}

// Decode parses one frame. It never panics; every rejection wraps one of
// the package's sentinel errors.
func Decode(k Kind, b []byte) (Message, error) {
	switch k {
	case Text:
		return decodeText(b)
	case Binary:
		return decodeBinary(b)
	}
	return nil, fmt.Errorf("%w: unknown frame kind %d", ErrMalformed, uint8(k))
}

func decodeBinary(b []byte) (Message, error) {
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%w: binary frame of %d bytes is shorter than its %d byte header", ErrMalformed, len(b), HeaderSize)
	}
	if b[0] != 'f' || b[1] != 'c' {
		return nil, fmt.Errorf("%w: bad magic %q", ErrMalformed, b[:2])
	}
	if b[2] != Version {
		return nil, fmt.Errorf("%w: binary frame of version %d (want %d)", ErrVersion, b[2], Version)
	}
	t := Type(b[3])
	if t.Kind() != Binary {
		return nil, fmt.Errorf("%w: type %s in a binary frame", ErrMalformed, t)
	}
	round := int(binary.LittleEndian.Uint32(b[4:]))
	n := uint64(binary.LittleEndian.Uint32(b[8:]))
	l := uint64(binary.LittleEndian.Uint32(b[12:]))
	if n > MaxWeights {
		return nil, fmt.Errorf("%w: %d weights (max %d)", ErrTooLarge, n, MaxWeights)
	}
	if l > MaxMeta {
		return nil, fmt.Errorf("%w: %d bytes of metadata (max %d)", ErrTooLarge, l, MaxMeta)
	}
	if want := HeaderSize + l + 8*n; uint64(len(b)) != want {
		return nil, fmt.Errorf("%w: %s frame of %d bytes, header says %d", ErrMalformed, t, len(b), want)
	}
	meta := b[HeaderSize : HeaderSize+l]
	p := b[HeaderSize+l:]
	sum := sha256.Sum256(p)
	if !bytes.Equal(sum[:], b[16:48]) {
		return nil, fmt.Errorf("%w: %s weight hash mismatch", ErrMalformed, t)
	}
	if t == TypeReport {
		return decodeReport(round, meta, p)
	}
	w := make([]float64, n)
	for i := range w {
		v := math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: weight %d is %v", ErrNotFinite, i, v)
		}
		w[i] = v
	}
	switch t {
	case TypeUpdate:
		u := &Update{Round: round, Weights: w}
		switch {
		case l == 0, bytes.Equal(meta, updateMeta[0]):
		case bytes.Equal(meta, updateMeta[1]):
			u.Dummy = true
		default:
			return nil, fmt.Errorf("%w: update metadata %q (want %s or %s)", ErrMalformed, meta, updateMeta[0], updateMeta[1])
		}
		return u, nil
	case TypeRoundStart:
		var m roundStartMeta
		if err := unmarshalStrict(meta, &m); err != nil {
			return nil, fmt.Errorf("%w: round_start metadata: %v", ErrMalformed, err)
		}
		if m.TimeLeftMillis < 0 || m.TimeLeftMillis > math.MaxInt64/int64(time.Millisecond) {
			return nil, fmt.Errorf("%w: round_start time left %d ms", ErrMalformed, m.TimeLeftMillis)
		}
		if m.Picked != nil && *m.Picked != 0 && *m.Picked != 1 {
			return nil, fmt.Errorf("%w: round_start picked %d (want 0 or 1)", ErrMalformed, *m.Picked)
		}
		return &RoundStart{Round: round, TimeLeft: time.Duration(m.TimeLeftMillis) * time.Millisecond,
			Picked: m.Picked == nil || *m.Picked == 1, Weights: w}, nil
	default: // TypeRoundResult
		var rm roundResultMeta
		if err := unmarshalStrict(meta, &rm); err != nil {
			return nil, fmt.Errorf("%w: round_result metadata: %v", ErrMalformed, err)
		}
		ev := rm.Event
		if sch := rm.Schedule; sch != nil && (sch.RoundLength < 0 || sch.RoundSlack < 0 || sch.Round < 0 || sch.Round > MaxRound) {
			return nil, fmt.Errorf("%w: round_result schedule %+v", ErrMalformed, *sch)
		}
		if ev.Round != round {
			return nil, fmt.Errorf("%w: round_result event for round %d in a frame of round %d", ErrMalformed, ev.Round, round)
		}
		if err := validateEvent(ev); err != nil {
			return nil, err
		}
		if ev.ModelSHA256 != "" {
			return nil, fmt.Errorf("%w: round_result metadata must not carry the model hash", ErrMalformed)
		}
		ev.ModelSHA256 = hex.EncodeToString(sum[:])
		return &RoundResult{Event: ev, Weights: w, Schedule: rm.Schedule}, nil
	}
}

// unmarshalStrict decodes one JSON object, refusing unknown fields and
// trailing data.
func unmarshalStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

func decodeText(b []byte) (Message, error) {
	if len(b) > MaxText {
		return nil, fmt.Errorf("%w: %d byte text frame (max %d)", ErrTooLarge, len(b), MaxText)
	}
	var env struct {
		V    *int   `json:"v"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if env.V == nil {
		return nil, fmt.Errorf("%w: text frame without a version field \"v\"", ErrMalformed)
	}
	if *env.V != Version {
		return nil, fmt.Errorf("%w: version %d (want %d)", ErrVersion, *env.V, Version)
	}
	var m Message
	switch env.Type {
	case "hello":
		m = &Hello{}
	case "welcome":
		m = &Welcome{}
	case "accepted":
		m = &Accepted{}
	case "finished":
		m = &Finished{}
	case "error":
		m = &Error{}
	case "ready":
		m = &Ready{}
	default:
		return nil, fmt.Errorf("%w: unknown or non-text message type %q", ErrMalformed, env.Type)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, env.Type, err)
	}
	if err := validateText(m); err != nil {
		return nil, err
	}
	return m, nil
}

func validRound(r int) bool { return r >= 0 && r <= MaxRound }

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func validateEvent(ev Event) error {
	if !validRound(ev.Round) {
		return fmt.Errorf("%w: event round %d out of range", ErrMalformed, ev.Round)
	}
	if !finite(ev.SampleRate, ev.NoiseMultiplier, ev.Epsilon, ev.Delta) {
		return fmt.Errorf("%w: event of round %d has a non-finite number", ErrMalformed, ev.Round)
	}
	return nil
}

// validateText checks what JSON itself does not: ranges and lengths.
func validateText(m Message) error {
	switch m := m.(type) {
	case *Hello:
		if m.Token == "" || len(m.Token) > MaxToken {
			return fmt.Errorf("%w: hello token of %d bytes (want 1..%d)", ErrMalformed, len(m.Token), MaxToken)
		}
	case *Welcome:
		switch m.State {
		case StateWaiting, StateRunning, StateFinished:
		default:
			return fmt.Errorf("%w: welcome state %q", ErrMalformed, m.State)
		}
		for _, ev := range m.Log {
			if err := validateEvent(ev); err != nil {
				return err
			}
		}
		s := m.Study
		if !finite(s.Epsilon, s.Delta, s.SampleRate, s.ClipNorm, s.NoiseMultiplier, s.LearningRate, s.TrainFraction) ||
			!finite(s.NoiseMultipliers...) || len(s.NoiseMultipliers) > MaxRound || len(s.TopUps) > MaxTopUps {
			return fmt.Errorf("%w: study parameters not finite", ErrMalformed)
		}
	case *Accepted:
		if !validRound(m.Round) {
			return fmt.Errorf("%w: accepted round %d out of range", ErrMalformed, m.Round)
		}
	case *Finished:
		if !validRound(m.Rounds) || !finite(m.Epsilon) {
			return fmt.Errorf("%w: finished with rounds %d, ε %v", ErrMalformed, m.Rounds, m.Epsilon)
		}
	case *Error:
		if !validRound(m.Round) {
			return fmt.Errorf("%w: error round %d out of range", ErrMalformed, m.Round)
		}
	}
	return nil
}
