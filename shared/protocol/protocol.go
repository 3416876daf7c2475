package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
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

// Message types (see the table in the package doc), numbered from 1 in
// this order: the number is the type byte of binary frames.
const (
	TypeHello Type = iota + 1
	TypeWelcome
	TypeRoundStart
	TypeUpdate
	TypeAccepted
	TypeRoundResult
	TypeFinished
	TypeError
	// TypeReady (client → coordinator, text) says the LHA's file is
	// chosen and checked and it pressed Join: from then on it counts
	// towards the start quorum and gets round_start. It carries nothing
	// about the file.
	TypeReady
	// TypeReport (client → coordinator, binary) is a two-server secure
	// aggregation report (report.go): every LHA of a study with a helper
	// answers every round with one.
	TypeReport
)

// types holds each message type's name (the "type" field of text frames)
// and the frame kind it travels in.
var types = [...]struct {
	name string
	kind Kind
}{
	TypeHello:       {"hello", Text},
	TypeWelcome:     {"welcome", Text},
	TypeRoundStart:  {"round_start", Binary},
	TypeUpdate:      {"update", Binary},
	TypeAccepted:    {"accepted", Text},
	TypeRoundResult: {"round_result", Binary},
	TypeFinished:    {"finished", Text},
	TypeError:       {"error", Text},
	TypeReady:       {"ready", Text},
	TypeReport:      {"report", Binary},
}

func (t Type) String() string {
	if int(t) < len(types) && types[t].name != "" {
		return types[t].name
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Kind returns the frame kind messages of type t travel in (0 for an
// unknown type).
func (t Type) Kind() Kind {
	if int(t) < len(types) {
		return types[t].kind
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
	// RoundLength is L, RoundSlack the slack (as in Study).
	RoundLength Duration `json:"round_length"`
	RoundSlack  Duration `json:"round_slack"`
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

// Error codes, numbered from 1 in this order (the numbers are the wire's).
const (
	CodeBadFrame Code = iota + 1
	CodeVersion
	CodeUnauthorized
	CodeReplaced
	CodeNotSampled
	CodeStaleRound
	CodeDuplicateUpdate
	CodeBadUpdate
	CodeTooLarge
	CodeFinished
	CodeInternal
	CodeHelloExpected
	// CodeRoundAbandoned: the round was abandoned (with a helper: the
	// helper did not answer or refused); nothing was released and no
	// budget was spent.
	CodeRoundAbandoned
)

// codeNames are the codes' names, in the order of their numbers.
var codeNames = strings.Fields(`bad_frame version unauthorized replaced not_sampled stale_round
	duplicate_update bad_update too_large finished internal hello_expected round_abandoned`)

func (c Code) String() string {
	if c >= 1 && int(c) <= len(codeNames) {
		return codeNames[c-1]
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
