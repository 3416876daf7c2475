package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// errFrameTimeout ends a connection whose frame body did not arrive within
// the frame read timeout.
var errFrameTimeout = errors.New("server: frame body not received in time")

// readFrame reads c's next message. It waits for the message's header
// without holding anything (an idle connection costs no buffer), then takes
// one of the server's frame slots, and only then reads the body, into a
// pooled buffer, within the frame read timeout. Until then the body stays
// in the kernel's socket buffer, where TCP flow control holds back the
// rest. The caller decodes and handles the frame, then calls done, which
// returns the buffer and the slot. So however many updates arrive at once,
// at most cap(s.slots) frames and their decoded weights are in memory.
//
// A body not read within the timeout closes the connection (cancelling a
// coder/websocket read context closes the socket): a slow or stalled
// sender holds its slot for at most that long.
func (s *Server) readFrame(ctx context.Context, c *conn) (typ websocket.MessageType, b []byte, done func(), err error) {
	// The context of Reader also bounds the body's reads; the timer below
	// cancels it once the body takes too long. It is not cancelled when c
	// is closed: cancelling a read closes the socket without a close
	// frame. c.close sends the close frame, which ends the read.
	mctx, cancel := context.WithCancel(ctx)
	typ, r, err := c.ws.Reader(mctx)
	if err != nil {
		cancel()
		return 0, nil, nil, err
	}
	select {
	case s.slots <- struct{}{}:
	case <-c.done:
		cancel()
		return 0, nil, nil, net.ErrClosed
	case <-ctx.Done():
		cancel()
		return 0, nil, nil, ctx.Err()
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(s.frameTimeout, func() { timedOut.Store(true); cancel() })
	buf := s.bufs.Get().(*[]byte)
	done = func() {
		s.bufs.Put(buf)
		<-s.slots
	}
	n, err := readBody(r, *buf)
	timer.Stop()
	cancel() // the read is over: cancelling no longer touches the socket
	if timedOut.Load() {
		err = errFrameTimeout
	}
	if err != nil {
		done()
		return 0, nil, nil, err
	}
	return typ, (*buf)[:n], done, nil
}

// readBody reads r to its end into buf. The websocket read limit (below
// len(buf)) ends an oversized message first; a full buffer is reported as
// too large all the same.
func readBody(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, fmt.Errorf("%w: message of %d bytes or more", protocol.ErrTooLarge, len(buf))
}

func (s *Server) readLoop(ctx context.Context, c *conn) {
	for {
		typ, b, done, err := s.readFrame(ctx, c)
		if err != nil {
			name := s.eng.File.LHAs[c.lha].Name
			switch {
			case errors.Is(err, websocket.ErrMessageTooBig), errors.Is(err, protocol.ErrTooLarge):
				s.m.rejected.WithLabelValues(protocol.CodeTooLarge.String()).Inc()
				s.log.Info("frame over the size limit: connection closed", "lha", name, "limit", s.limit)
			case errors.Is(err, errFrameTimeout):
				s.m.slowFrames.Inc()
				s.log.Info("frame body too slow: connection closed", "lha", name, "timeout", s.frameTimeout)
			}
			return
		}
		if typ == websocket.MessageBinary {
			// Acknowledged at once, buffered undecoded (study.Coordinator.Frame).
			s.co.Frame(c.lha, b, time.Now(), func(k protocol.Kind, ack []byte) { s.send(c, k, ack) })
			done()
			continue
		}
		if study.IsReady(b) {
			done()
			if s.co.Ready(c.lha, time.Now(), func(k protocol.Kind, m []byte) { s.send(c, k, m) }) {
				s.log.Debug("LHA ready", "lha", s.eng.File.LHAs[c.lha].Name)
				s.signal()
			}
			continue
		}
		code, msg := study.TextVerdict(b)
		done()
		s.m.rejected.WithLabelValues(code.String()).Inc()
		s.log.Info("message rejected", "lha", s.eng.File.LHAs[c.lha].Name, "code", code.String(), "err", msg)
		s.send(c, protocol.Text, encodeErr(code, 0, "%s", msg))
		if code.Fatal() {
			time.Sleep(50 * time.Millisecond)
			c.close(websocket.StatusPolicyViolation, code.String())
			return
		}
	}
}
