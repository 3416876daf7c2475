package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// --- connections ---

// send queues a frame for c; a full outbox drops the client. s.mu held.
func (s *Server) send(c *conn, k protocol.Kind, b []byte) {
	select {
	case c.out <- frame{k, b}:
	default:
		s.log.Warn("client too slow, disconnecting", "lha", s.eng.File.LHAs[c.lha].Name)
		go c.close(websocket.StatusPolicyViolation, "too slow")
	}
}

func (c *conn) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		go func() {
			c.ws.Close(code, reason)
		}()
	})
}

func (c *conn) writer() {
	for {
		select {
		case <-c.done:
			return
		case f := <-c.out:
			typ := websocket.MessageText
			if f.kind == protocol.Binary {
				typ = websocket.MessageBinary
			}
			ctx, cancel := context.WithTimeout(context.Background(), WriteTimeout)
			err := c.ws.Write(ctx, typ, f.b)
			cancel()
			if err != nil {
				c.close(websocket.StatusGoingAway, "write failed")
				return
			}
		}
	}
}

func encodeErr(code protocol.Code, round int, format string, a ...any) []byte {
	_, b, err := protocol.Encode(&protocol.Error{Code: code, Round: round, Message: fmt.Sprintf(format, a...)})
	if err != nil {
		panic("server: cannot encode an error message: " + err.Error())
	}
	return b
}

// reject sends an error on a connection not registered and closes it.
func reject(ctx context.Context, ws *websocket.Conn, code protocol.Code, msg string) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ws.Write(ctx, websocket.MessageText, encodeErr(code, 0, "%s", msg))
	ws.Close(websocket.StatusPolicyViolation, code.String())
}

// remoteHost is the IP address of a request's peer (the whole RemoteAddr
// if it has no port).
func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// serveWS authenticates a websocket request before the upgrade
// (authenticate), upgrades it, and hands the LHA its first frames (the
// welcome, …): the client sends no hello.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	lha := s.authenticate(w, r)
	if lha < 0 {
		return
	}
	ws, err := websocket.Accept(w, r, s.acceptOptions())
	if err != nil {
		s.m.refused.WithLabelValues("origin_or_handshake").Inc()
		s.log.Info("websocket refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "err", err)
		return
	}
	ctx := r.Context()
	if protocol.IsForecastOnly(r.Header.Values("Sec-WebSocket-Protocol")) {
		s.visit(ctx, ws, lha)
		return
	}
	ws.SetReadLimit(s.limit)
	c := &conn{lha: lha, ws: ws, out: make(chan frame, outboxSize), done: make(chan struct{}), since: time.Now(), remote: r.RemoteAddr}
	name := s.eng.File.LHAs[lha].Name

	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		reject(ctx, ws, protocol.CodeInternal, "coordinator shutting down")
		return
	}
	// The Coordinator hands over the welcome (and what follows it) under
	// the lock its releases take: the connection is registered and its
	// first frames queued before or after a release, never in between.
	err = s.co.Join(lha, time.Now(), func(msgs []study.Msg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if old := s.conns[lha]; old != nil {
			select {
			case old.out <- frame{protocol.Text, encodeErr(protocol.CodeReplaced, 0, "a newer connection joined with this token")}:
			default:
			}
			go func() {
				time.Sleep(100 * time.Millisecond) // let the writer flush the error
				old.close(websocket.StatusPolicyViolation, "replaced")
			}()
			s.log.Info("connection replaced", "lha", name)
		}
		s.conns[lha] = c
		for _, m := range msgs {
			c.out <- frame{m.Kind, m.B}
		}
	})
	if err != nil {
		s.log.Error("encode welcome", "err", err)
		reject(ctx, ws, protocol.CodeInternal, "cannot encode the welcome")
		return
	}
	s.signal()
	s.log.Debug("LHA joined", "lha", name, "remote", r.RemoteAddr)

	go c.writer()
	s.readLoop(ctx, c)

	s.mu.Lock()
	if s.conns[lha] == c {
		delete(s.conns, lha)
	}
	s.mu.Unlock()
	c.close(websocket.StatusNormalClosure, "")
	s.signal()
	s.log.Debug("LHA left", "lha", name)
}

// visit answers a forecast-only visit of LHA lha (protocol.ForecastOnly)
// on ws with the frames a joining connection starts with, and closes it.
// The connection is never registered: the LHA's live connection, if any,
// keeps its place, its ready state and its rounds, and ws is never read
// from (the client sends nothing after its handshake).
func (s *Server) visit(ctx context.Context, ws *websocket.Conn, lha int) {
	msgs, err := s.co.Visit(lha)
	if err != nil {
		s.log.Error("encode welcome", "err", err)
		reject(ctx, ws, protocol.CodeInternal, "cannot encode the welcome")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, WriteTimeout)
	defer cancel()
	for _, m := range msgs {
		typ := websocket.MessageText
		if m.Kind == protocol.Binary {
			typ = websocket.MessageBinary
		}
		if ws.Write(ctx, typ, m.B) != nil {
			ws.CloseNow()
			return
		}
	}
	ws.Close(websocket.StatusNormalClosure, "forecast visit answered")
	s.log.Debug("forecast visit answered", "lha", s.eng.File.LHAs[lha].Name)
}
