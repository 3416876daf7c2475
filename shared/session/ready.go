package session

import (
	"context"
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
)

// sendReady tells the coordinator, when Run starts a study that has not
// ended, that this LHA's file is checked and it takes part: only now does
// it count towards the start quorum and get round_start. Every connection
// starts not ready; a redial during Run says ready again (see connect).
// The message carries nothing about the file.
func (s *Session) sendReady(ctx context.Context) error {
	if s.state == protocol.StateFinished {
		return nil
	}
	s.running = true
	return s.writeReady(ctx, s.ws)
}

// writeReady sends the ready message on ws (unless
// the study has ended) and reports it as sent.
func (s *Session) writeReady(ctx context.Context, ws Conn) error {
	if s.state == protocol.StateFinished {
		return nil
	}
	kind, b, err := protocol.Encode(&protocol.Ready{})
	if err != nil {
		return err
	}
	if err := ws.Write(ctx, kind, b); err != nil {
		return fmt.Errorf("session: send ready: %w", err)
	}
	s.mu.Lock()
	s.pending = append(s.pending, Outgoing{Type: "ready", Bytes: len(b)})
	s.mu.Unlock()
	return nil
}
