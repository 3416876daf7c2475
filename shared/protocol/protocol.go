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

	"github.com/fedcast/fedcast/shared/model"
)

// Version is the protocol version this package speaks. A peer with another
// version is refused with [CodeVersion].
const Version = 1

// Size limits. A frame over them is refused before it is parsed.
const (
	// MaxText is the largest text frame in bytes (a welcome with a long
	// round log is the largest text message).
	MaxText = 4 << 20
	// MaxMeta is the largest metadata section of a binary frame in bytes.
	MaxMeta = 4096
	// MaxWeights is the largest number of weights in a binary frame.
	MaxWeights = 1 << 22
	// MaxToken is the longest join token accepted in a hello.
	MaxToken = 256
	// MaxRound is the largest round id (rounds are uint32 on the wire).
	MaxRound = math.MaxUint32
	// HeaderSize is the fixed part of a binary frame.
	HeaderSize = 48
)

// Sentinel errors; Decode and Encode wrap them with details.
var (
	ErrMalformed = errors.New("protocol: malformed frame")
	ErrVersion   = errors.New("protocol: unsupported version")
	ErrTooLarge  = errors.New("protocol: frame too large")
	ErrNotFinite = errors.New("protocol: weights not finite")
)

// Kind is the websocket frame kind a message travels in.
type Kind uint8

const (
	// Text is a websocket text frame holding a JSON object.
	Text Kind = 1
	// Binary is a websocket binary frame in the layout of the package doc.
	Binary Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Type identifies a message; its number is the type byte of binary frames
// and its name the "type" field of text frames.
type Type uint8

// Message types (see the table in the package doc).
const (
	TypeHello       Type = 1
	TypeWelcome     Type = 2
	TypeRoundStart  Type = 3
	TypeUpdate      Type = 4
	TypeAccepted    Type = 5
	TypeRoundResult Type = 6
	TypeFinished    Type = 7
	TypeError       Type = 8
	// TypeReady (client → coordinator, text) says the LHA's file is
	// chosen and checked and it pressed Join: from then on it counts
	// towards the start quorum and gets round_start. It carries nothing
	// about the file.
	TypeReady Type = 9
	// TypeReport (client → coordinator, binary) is a two-server secure
	// aggregation report (report.go): every LHA of a study with a helper
	// answers every round with one.
	TypeReport Type = 10
)

var typeNames = map[Type]string{
	TypeHello:       "hello",
	TypeWelcome:     "welcome",
	TypeRoundStart:  "round_start",
	TypeUpdate:      "update",
	TypeAccepted:    "accepted",
	TypeRoundResult: "round_result",
	TypeFinished:    "finished",
	TypeError:       "error",
	TypeReady:       "ready",
	TypeReport:      "report",
}

func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Kind returns the frame kind messages of type t travel in (0 for an
// unknown type).
func (t Type) Kind() Kind {
	switch t {
	case TypeRoundStart, TypeUpdate, TypeRoundResult, TypeReport:
		return Binary
	case TypeHello, TypeWelcome, TypeAccepted, TypeFinished, TypeError, TypeReady:
		return Text
	}
	return 0
}

// Message is one protocol message: *Hello, *Welcome, *RoundStart, *Update,
// *Accepted, *RoundResult, *Finished, *Error or *Ready.
type Message interface {
	Type() Type
}

// Hello is the first message of a client: its secret join token.
type Hello struct {
	Token string `json:"token"`
}

// Ready is sent by an LHA once its file is chosen and checked and it has
// pressed Join (the headless client: once its file is checked), and again
// on each later connection: every connection starts not ready, and only a
// ready one counts towards the start quorum and gets round_start. It has
// no fields: whether an LHA is ready never depends on what its file holds.
type Ready struct{}

// Study holds the public parameters of a study, everything a client needs
// to train and to recompute the privacy budget itself. Nothing in it is
// secret or depends on any LHA's data.
type Study struct {
	// Protocol is the protocol version of the coordinator.
	Protocol int `json:"protocol"`
	// Name names the study for people.
	Name string `json:"name"`
	// Epsilon is the privacy budget ε, Delta its δ.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Rounds is T, the planned number of rounds (of all campaigns
	// together in a continuing study).
	Rounds int `json:"rounds"`
	// Campaigns is the number of training campaigns of a continuing
	// study, each of Rounds/Campaigns rounds, campaign k starting at
	// t₀ + (k−1)·Every (0 or 1: one campaign, as before the field);
	// EveryMillis is Every in milliseconds. Public and fixed at creation
	// (campaign.go).
	Campaigns   int   `json:"campaigns,omitempty"`
	EveryMillis int64 `json:"every_ms,omitempty"`
	// Clients is N, the number of enrolled LHAs (fixed at the start).
	Clients int `json:"clients"`
	// ExpectedClients is m, the expected number of LHAs per round.
	ExpectedClients int `json:"expected_clients"`
	// SampleRate is q = m/N.
	SampleRate float64 `json:"sample_rate"`
	// ClipNorm is S, the L2 bound of each update.
	ClipNorm float64 `json:"clip_norm"`
	// NoiseMultiplier is c; the noise on the mean has σ = c·S/m.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// LocalEpochs is E, full-batch Adam steps per round.
	LocalEpochs int `json:"local_epochs"`
	// LearningRate is Adam's step size.
	LearningRate float64 `json:"learning_rate"`
	// History is H (input days), Horizon is P (days ahead).
	History int `json:"history"`
	Horizon int `json:"horizon"`
	// Smoothing is "centered" or "trailing" (7-day moving average).
	Smoothing string `json:"smoothing"`
	// TrainFraction is the share of each area's windows (earliest by
	// target date) used for training.
	TrainFraction float64 `json:"train_fraction"`
	// From and To restrict the windows to a date range (YYYY-MM-DD, both
	// inclusive); empty means the whole series.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Layers are the MLP's layer sizes, input H first, output 1 last.
	Layers []int `json:"layers"`
	// Features names what the network reads and predicts (shared/model):
	// "log-change" (changes of ln(1+count) against the last input day; an
	// output of 0 is the no-change forecast) or "counts" (the paper's raw
	// counts). Empty means "counts" (coordinators before the field).
	Features string `json:"features,omitempty"`
	// Damping in (0, 1] multiplies a log-change model's output before it
	// becomes a forecast (the forecast change is shrunk toward "no
	// change"). 0 (absent) means 1.
	Damping float64 `json:"damping,omitempty"`
	// Params is the length of the flat parameter vector.
	Params int `json:"params"`
	// RoundLengthMillis is L, the length of one slot of the public round
	// schedule in milliseconds: rounds open every L (see Schedule).
	RoundLengthMillis int64 `json:"round_length_ms"`
	// RoundSlackMillis is the end of each slot kept for aggregating and
	// committing: updates are taken until L − slack after a round opens,
	// and the model is released at the slot's end.
	RoundSlackMillis int64 `json:"round_slack_ms"`
	// InsecureSeed is true when the coordinator runs in research mode with
	// reproducible (not secret) sampling and noise.
	InsecureSeed bool `json:"insecure_seed,omitempty"`
	// Accountant names the privacy accountant that computes ε from the
	// rounds: "rdp" or "pld" (empty from coordinators that predate the
	// field: "rdp").
	Accountant string `json:"accountant,omitempty"`
	// StudyStrategy: strategy, λ, privacy level and local DP-SGD
	// (strategy.go; all empty: DP-FedAvg with client-level DP).
	StudyStrategy
	// NoiseSchedule, when present, is c_1 … c_T: the noise multiplier of
	// every round, fixed before the study (privacy.Schedule). Each LHA
	// checks every round's c against it. NoiseMultiplier is then the
	// smallest of them. Absent: every round has NoiseMultiplier.
	NoiseSchedule []float64 `json:"noise_schedule,omitempty"`
	// CyclicSeed, in a study with strategy "cyclic", is the seed of the
	// public turn timetable: the hex SHA-256 of the study file. Round r's
	// order is fl.CyclicOrder(CyclicSeed, r, Clients), and a round of the
	// protocol (round_start, update, event) is then one turn k = 1 … T·N
	// (fl.CyclicTurn). Empty in other studies.
	CyclicSeed string `json:"cyclic_seed,omitempty"`
	// Helper, when present, names the second server of two-server secure
	// aggregation (shared/secagg, studyhash.go): no single server sees an
	// LHA's update. Absent: the coordinator sees each clipped update.
	Helper *Helper `json:"helper,omitempty"`
	// TopUps are the raises of the lifetime budget made since the study
	// was created, in order (topup.go); the fields above already include
	// them. Absent: the budget is the one written at creation.
	TopUps []TopUp `json:"top_ups,omitempty"`
	// PublicInputs are the public data the study's design reads beside
	// each LHA's file, with source and hash (public.go).
	PublicInputs []PublicInput `json:"public_inputs,omitempty"`
	// Weekly, with Features "weekly-total", are the weekly design's
	// windows (model.Weekly): each LHA trains on and forecasts the next
	// 7-day total from its own series and the public inputs. Absent in
	// every other study.
	Weekly *model.Weekly `json:"weekly,omitempty"`
}

// Event is one round's privacy event as released to everyone: with the
// study's δ, the list of events is all a client needs to recompute ε.
type Event struct {
	Round           int     `json:"round"`
	SampleRate      float64 `json:"sample_rate"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// Epsilon is the coordinator's ε after this round (all rounds so far).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// ModelSHA256 is the hex SHA-256 of the round's noised model
	// ([HashWeights]).
	ModelSHA256 string `json:"model_sha256,omitempty"`
	// Accountant is the accountant that computed Epsilon ("rdp" or
	// "pld"; empty: "rdp").
	Accountant string `json:"accountant,omitempty"`
	// Guarantee is "example" for a round of a study with privacy
	// "example": the coordinator added no noise, Epsilon and
	// NoiseMultiplier are 0 (there is no client-level ε) and the
	// guarantee is each LHA's own example-level one. Empty otherwise
	// (client-level ε as before).
	Guarantee string `json:"guarantee,omitempty"`
}

// State of a study as seen from outside.
const (
	StateWaiting  = "waiting"
	StateRunning  = "running"
	StateFinished = "finished"
)

// Schedule is the study's public round schedule. Slot j (j = 0, 1, …)
// starts at Start + j·L; the round that opens at a slot's start takes
// updates until L − slack later and is released at the slot's end, when
// the next round opens. Before any restart round k opens at
// Start + (k−1)·L; after a restart the study resumes at the next free
// slot. Nothing in it depends on who takes part.
type Schedule struct {
	// Start is t₀, the moment the start quorum was reached (nil while the
	// study waits for it).
	Start *time.Time `json:"start,omitempty"`
	// RoundLengthMillis is L, RoundSlackMillis the slack (as in Study).
	RoundLengthMillis int64 `json:"round_length_ms"`
	RoundSlackMillis  int64 `json:"round_slack_ms"`
	// Round is the round that is open now, or opens next, at Opens; its
	// updates must arrive by TrainBy and its model is released at
	// Release. All zero/nil when no round is planned (waiting for the
	// quorum, or finished).
	Round   int        `json:"round,omitempty"`
	Opens   *time.Time `json:"opens,omitempty"`
	TrainBy *time.Time `json:"train_by,omitempty"`
	Release *time.Time `json:"release,omitempty"`
}

// Welcome answers a valid hello.
type Welcome struct {
	Study Study `json:"study"`
	// Schedule is the round schedule as of the last schedule tick.
	Schedule *Schedule `json:"schedule,omitempty"`
	// LHA is the name the coordinator enrolled this token under.
	LHA string `json:"lha"`
	// Index is the LHA's place in the study file's enrolment (0-based),
	// sent in cyclic studies only: with Study.CyclicSeed it tells the LHA
	// which turns of the public timetable are its own.
	Index *int `json:"index,omitempty"`
	// State is StateWaiting, StateRunning or StateFinished.
	State string `json:"state"`
	// Log holds the committed rounds' events in order (round 1 first).
	Log []Event `json:"log"`
}

// RoundStart opens round Round for an LHA: every online and ready LHA
// (see Ready) gets one, with the same Weights (the last released model);
// Picked says whether this LHA was sampled to train. Picked travels as a
// one-digit number in the metadata, so the frames to picked and unpicked
// LHAs have the same size.
type RoundStart struct {
	Round int
	// TimeLeft is how long the coordinator still waits for the answer
	// (millisecond resolution on the wire).
	TimeLeft time.Duration
	// Picked: this LHA was sampled; it answers with its update. Otherwise
	// it answers with a dummy (see AnswerAfter for when).
	Picked  bool
	Weights []float64
}

// Update is a client's answer to round Round's round_start: its clipped
// Δw, or, when Dummy is set, a frame of the same size that carries
// nothing (the Weights are zeros and are never read). Every online and
// ready LHA answers every round, so an observer of the frames cannot tell who was
// picked; the coordinator sums only real updates.
type Update struct {
	Round   int
	Dummy   bool
	Weights []float64
}

// Accepted acknowledges a binary frame as received. The coordinator sends
// the same acknowledgement (Round 0) for every binary frame at once,
// whatever its content: frames are checked only when the round closes,
// and a rejected update is answered with an Error at the round's release.
type Accepted struct {
	Round int `json:"round"`
}

// RoundResult releases a round: its privacy event and the new global model.
// Event.ModelSHA256 is the header's weight hash.
type RoundResult struct {
	Event   Event
	Weights []float64
	// Schedule is the public round schedule as of the release, with the
	// round that opens at the release (nil from a coordinator without
	// schedules).
	Schedule *Schedule
}

// roundResultMeta is a round_result's metadata: the event and the
// schedule.
type roundResultMeta struct {
	Event
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Finished says the study has ended.
type Finished struct {
	// Rounds is the number of rounds completed.
	Rounds int `json:"rounds"`
	// Epsilon is ε spent over them.
	Epsilon float64 `json:"epsilon"`
	// Reason is "rounds" (T rounds done) or "budget" (one more round would
	// exceed ε).
	Reason string `json:"reason"`
	// ModelSHA256 is the hex hash of the final model.
	ModelSHA256 string `json:"model_sha256,omitempty"`
}

// Code is an error code (table in the package doc).
type Code int

// Error codes.
const (
	CodeBadFrame        Code = 1
	CodeVersion         Code = 2
	CodeUnauthorized    Code = 3
	CodeReplaced        Code = 4
	CodeNotSampled      Code = 5
	CodeStaleRound      Code = 6
	CodeDuplicateUpdate Code = 7
	CodeBadUpdate       Code = 8
	CodeTooLarge        Code = 9
	CodeFinished        Code = 10
	CodeInternal        Code = 11
	CodeHelloExpected   Code = 12
	// CodeRoundAbandoned: the round was abandoned (with a helper: the
	// helper did not answer or refused); nothing was released and no
	// budget was spent.
	CodeRoundAbandoned Code = 13
)

var codeNames = map[Code]string{
	CodeBadFrame:        "bad_frame",
	CodeVersion:         "version",
	CodeUnauthorized:    "unauthorized",
	CodeReplaced:        "replaced",
	CodeNotSampled:      "not_sampled",
	CodeStaleRound:      "stale_round",
	CodeDuplicateUpdate: "duplicate_update",
	CodeBadUpdate:       "bad_update",
	CodeTooLarge:        "too_large",
	CodeFinished:        "finished",
	CodeInternal:        "internal",
	CodeHelloExpected:   "hello_expected",
	CodeRoundAbandoned:  "round_abandoned",
}

func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Fatal reports whether the coordinator closes the connection after an
// error with this code.
func (c Code) Fatal() bool {
	switch c {
	case CodeNotSampled, CodeStaleRound, CodeDuplicateUpdate, CodeBadUpdate, CodeFinished, CodeRoundAbandoned:
		return false
	}
	return true
}

// Error is an error reported by the coordinator. It is also a Go error, so a
// client can return it and callers can inspect it with errors.As.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Round   int    `json:"round,omitempty"`
}

func (e *Error) Error() string {
	if e.Round > 0 {
		return fmt.Sprintf("protocol: coordinator error %d (%s) in round %d: %s", int(e.Code), e.Code, e.Round, e.Message)
	}
	return fmt.Sprintf("protocol: coordinator error %d (%s): %s", int(e.Code), e.Code, e.Message)
}

func (*Hello) Type() Type       { return TypeHello }
func (*Welcome) Type() Type     { return TypeWelcome }
func (*RoundStart) Type() Type  { return TypeRoundStart }
func (*Update) Type() Type      { return TypeUpdate }
func (*Accepted) Type() Type    { return TypeAccepted }
func (*RoundResult) Type() Type { return TypeRoundResult }
func (*Finished) Type() Type    { return TypeFinished }
func (*Error) Type() Type       { return TypeError }
func (*Ready) Type() Type       { return TypeReady }

// HashWeights returns the SHA-256 of w as 8·len(w) little-endian float64
// bytes: the hash in binary frames and in the privacy ledger.
func HashWeights(w []float64) [32]byte {
	h := sha256.New()
	var buf [8 * 512]byte
	for len(w) > 0 {
		n := min(len(w), 512)
		for i, v := range w[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
		}
		h.Write(buf[:8*n])
		w = w[n:]
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// HashHex is HashWeights in lowercase hex.
func HashHex(w []float64) string {
	s := HashWeights(w)
	return hex.EncodeToString(s[:])
}

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
		if sch := rm.Schedule; sch != nil && (sch.RoundLengthMillis < 0 || sch.RoundSlackMillis < 0 || sch.Round < 0 || sch.Round > MaxRound) {
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
			!finite(s.NoiseSchedule...) || len(s.NoiseSchedule) > MaxRound || len(s.TopUps) > MaxTopUps {
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
