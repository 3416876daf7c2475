package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Conn is one connection to the coordinator as the session needs it: a
// message-oriented, ordered, reliable channel of text and binary frames
// (a websocket in practice). The session never reads or writes
// concurrently on a Conn, but it may call Close while a Read waits.
type Conn interface {
	// Read waits for the next frame. A frame longer than limit bytes is
	// an error (the connection is then unusable). Read returns an error
	// when ctx ends or the connection is closed.
	Read(ctx context.Context, limit int64) (protocol.Kind, []byte, error)
	// Write sends one frame of kind.
	Write(ctx context.Context, kind protocol.Kind, frame []byte) error
	// Close ends the connection; code and reason are sent to the peer
	// when the transport can (see CloseCode).
	Close(code CloseCode, reason string) error
}

// CloseCode says why the session closes a connection. The values are
// the websocket close codes of RFC 6455, so a websocket Conn passes them
// on unchanged; CloseAbort drops the connection without a closing
// handshake.
type CloseCode int

// Close codes used by the session.
const (
	// CloseAbort drops the connection at once (no closing handshake):
	// after a transport failure or a refusal that ends the session.
	CloseAbort CloseCode = 0
	// CloseNormal ends a finished study or a Close call.
	CloseNormal CloseCode = 1000
	// ClosePolicyViolation ends a connection whose peer broke the
	// protocol or failed a check (a bad welcome, a re-noised model).
	ClosePolicyViolation CloseCode = 1008
)

// Dialer opens a connection to the coordinator's websocket URL
// (ws://HOST/api/ws or wss://…, from ParseJoinLink), offering protocols
// as the handshake's subprotocols (Sec-WebSocket-Protocol): they carry
// the join token (protocol.Subprotocols), which the coordinator checks
// before it accepts the connection. A dialer that learns why the
// coordinator refused (an HTTP status) returns a *protocol.Error. The
// browser dials with its WebSocket (package wasm), native clients with
// coordinator/lhaconn; tests dial an in-memory Pipe.
type Dialer func(ctx context.Context, url string, protocols []string) (Conn, error)

// ErrClosed is returned by a Pipe end after either end was closed.
var ErrClosed = errors.New("session: connection closed")

// Pipe returns the two ends of an in-memory connection: frames written
// to one are read from the other, in order. Writes do not wait for the
// reader (frames queue), so a test can play the coordinator on one end
// from the same goroutine. Closing either end closes both; a frame
// already queued can still be read. It needs no network and runs in
// every GOOS, js included.
func Pipe() (a, b Conn) {
	p := &pipe{closed: make(chan struct{})}
	p.q[0].wake = make(chan struct{}, 1)
	p.q[1].wake = make(chan struct{}, 1)
	return &pipeEnd{p: p, in: &p.q[0], out: &p.q[1]}, &pipeEnd{p: p, in: &p.q[1], out: &p.q[0]}
}

type frame struct {
	kind protocol.Kind
	data []byte
}

type queue struct {
	frames []frame
	wake   chan struct{} // one token when frames may be waiting
}

type pipe struct {
	mu     sync.Mutex
	q      [2]queue
	closed chan struct{}
	code   CloseCode
	once   sync.Once
}

type pipeEnd struct {
	p       *pipe
	in, out *queue
}

func (e *pipeEnd) Read(ctx context.Context, limit int64) (protocol.Kind, []byte, error) {
	for {
		e.p.mu.Lock()
		if len(e.in.frames) > 0 {
			f := e.in.frames[0]
			e.in.frames = e.in.frames[1:]
			e.p.mu.Unlock()
			if int64(len(f.data)) > limit {
				e.Close(ClosePolicyViolation, "frame too large")
				return 0, nil, fmt.Errorf("session: pipe: %d-byte frame over the read limit of %d", len(f.data), limit)
			}
			return f.kind, f.data, nil
		}
		e.p.mu.Unlock()
		select {
		case <-e.in.wake:
		case <-e.p.closed:
			e.p.mu.Lock()
			n := len(e.in.frames)
			e.p.mu.Unlock()
			if n == 0 {
				return 0, nil, fmt.Errorf("%w (code %d)", ErrClosed, e.p.code)
			}
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
	}
}

func (e *pipeEnd) Write(ctx context.Context, kind protocol.Kind, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-e.p.closed:
		return ErrClosed
	default:
	}
	e.p.mu.Lock()
	e.out.frames = append(e.out.frames, frame{kind, append([]byte(nil), data...)})
	e.p.mu.Unlock()
	select {
	case e.out.wake <- struct{}{}:
	default:
	}
	return nil
}

func (e *pipeEnd) Close(code CloseCode, reason string) error {
	e.p.once.Do(func() {
		e.p.mu.Lock()
		e.p.code = code
		e.p.mu.Unlock()
		close(e.p.closed)
	})
	return nil
}
