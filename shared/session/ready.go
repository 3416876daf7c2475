package session

import (
	"context"
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
)

// sendReady tells the coordinator, when Run starts a study that has not
// ended, that this LHA's file is checked and it takes part: only now does
// it count towards the start quorum. The message carries nothing about
// the file.
func (s *Session) sendReady(ctx context.Context) error {
	if s.state == protocol.StateFinished {
		return nil
	}
	s.running = true
	kind, b, err := protocol.Encode(&protocol.Ready{})
	if err != nil {
		return err
	}
	if err := s.ws.Write(ctx, kind, b); err != nil {
		return fmt.Errorf("session: send ready: %w", err)
	}
	s.mu.Lock()
	s.pending = append(s.pending, Outgoing{Type: "ready", Bytes: len(b)})
	s.mu.Unlock()
	return nil
}
