package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Authentication travels in the websocket handshake, before any frame:
// a client offers two subprotocols in its Sec-WebSocket-Protocol header,
// [Subprotocol] and [AuthPrefix] followed by its join token in unpadded
// base64url (browsers can set this header; they cannot set others). The
// coordinator checks the token before it upgrades the connection and
// answers with Subprotocol only, so the token is never echoed. A request
// without a valid token gets an HTTP error and never becomes a websocket:
// no state an outsider can fill waits for a hello.
const (
	// Subprotocol names this protocol version in the handshake; the
	// coordinator selects it.
	Subprotocol = "fedcast.v1"
	// AuthPrefix starts the subprotocol that carries the join token.
	AuthPrefix = "fedcast.auth."
	// ForecastOnly, offered beside a join token, asks for a forecast-only
	// visit: the coordinator answers with the frames a joining LHA starts
	// with (the welcome, the latest released round_result, finished) and
	// closes, without registering the connection. The LHA's live
	// connection, if any, is not replaced and its state (online, ready)
	// does not change; the visit is not counted anywhere.
	ForecastOnly = "fedcast.forecast"
)

// ForecastSubprotocols returns the subprotocols of a forecast-only visit
// with token: Subprotocols(token) and ForecastOnly.
func ForecastSubprotocols(token string) []string {
	return append(Subprotocols(token), ForecastOnly)
}

// IsForecastOnly reports whether a handshake's Sec-WebSocket-Protocol
// header values offer ForecastOnly (it says nothing of the token: see
// ParseAuth).
func IsForecastOnly(header []string) bool {
	for _, h := range header {
		for p := range strings.SplitSeq(h, ",") {
			if strings.TrimSpace(p) == ForecastOnly {
				return true
			}
		}
	}
	return false
}

// Errors of ParseAuth.
var (
	// ErrNoToken: the handshake carries no join token.
	ErrNoToken = errors.New("protocol: no join token in the websocket handshake")
)

// Subprotocols returns the subprotocols a client offers to join with
// token: Subprotocol, then the token's. Every value is an HTTP token (the
// characters a browser's WebSocket accepts).
func Subprotocols(token string) []string {
	return []string{Subprotocol, AuthPrefix + base64.RawURLEncoding.EncodeToString([]byte(token))}
}

// ParseAuth returns the join token of a handshake's Sec-WebSocket-Protocol
// header values (each a comma-separated list). It fails with ErrNoToken
// when none is offered, ErrVersion when Subprotocol is not offered, and
// ErrMalformed for a token that does not decode or is longer than MaxToken
// or offered twice.
func ParseAuth(header []string) (string, error) {
	var token string
	found, version := 0, false
	for _, h := range header {
		for p := range strings.SplitSeq(h, ",") {
			p = strings.TrimSpace(p)
			switch {
			case p == Subprotocol:
				version = true
			case strings.HasPrefix(p, AuthPrefix):
				enc := p[len(AuthPrefix):]
				if len(enc) > base64.RawURLEncoding.EncodedLen(MaxToken) {
					return "", fmt.Errorf("%w: join token of over %d bytes", ErrMalformed, MaxToken)
				}
				b, err := base64.RawURLEncoding.DecodeString(enc)
				if err != nil || len(b) == 0 {
					return "", fmt.Errorf("%w: join token is not unpadded base64url", ErrMalformed)
				}
				token = string(b)
				found++
			}
		}
	}
	switch {
	case found == 0:
		return "", ErrNoToken
	case found > 1:
		return "", fmt.Errorf("%w: %d join tokens offered", ErrMalformed, found)
	case !version:
		return "", fmt.Errorf("%w: the client does not offer %s", ErrVersion, Subprotocol)
	}
	return token, nil
}

// AnswerAfter is when, counted from a round_start's arrival, a client
// sends its answer (an update or a dummy) to a round_start with time left
// timeLeft: the same rule for every LHA, picked or not, so the moment a
// frame leaves says nothing about who was picked. The answer leaves a
// fifth of the time left, at most AnswerMargin, before the window closes;
// training that has not finished by then is not waited for.
func AnswerAfter(timeLeft time.Duration) time.Duration {
	if timeLeft <= 0 {
		return 0
	}
	return timeLeft - min(timeLeft/5, AnswerMargin)
}

// AnswerMargin is the most time AnswerAfter keeps between an answer and
// the close of its window (for the frame to cross the network).
const AnswerMargin = 5 * time.Second

// PeekDummy reports whether binary frame b is a well-formed dummy
// answer (see Update.Dummy) and returns its round, reading only the
// header and the metadata: a coordinator keeps no more of a dummy than
// that. It costs the same whatever the frame holds.
func PeekDummy(b []byte) (round int, ok bool) {
	if len(b) < HeaderSize+len(updateMeta[1]) || b[0] != 'f' || b[1] != 'c' || b[2] != Version || Type(b[3]) != TypeUpdate {
		return 0, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:]))
	l := uint64(binary.LittleEndian.Uint32(b[12:]))
	if l != uint64(len(updateMeta[1])) || !bytes.Equal(b[HeaderSize:HeaderSize+l], updateMeta[1]) {
		return 0, false
	}
	if n > MaxWeights || uint64(len(b)) != HeaderSize+l+8*n {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(b[4:])), true
}

// DummyHead is the part of a dummy frame that PeekDummy reads.
const DummyHead = HeaderSize + len(`{"dummy":1}`)
