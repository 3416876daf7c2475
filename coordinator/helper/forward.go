package helper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// A Forwarder is the leader's side of the helper API with the round's
// report set made sticky: the first set of reports the leader forwards
// for a round is the round's set for good. If the round has to be
// reopened (the helper's answer was lost to a timeout, or the leader was
// killed after forwarding), the leader forwards that same set again, and
// the helper answers with the share it committed for it (Repeated);
// otherwise the helper, which releases one share per round, would refuse
// every new set and the study could not go on. With Dir set, the set is
// written to Dir (synced) before it is forwarded, so it survives a crash
// of the leader.
type Forwarder struct {
	Client *Client
	// Dir is the leader's state directory (empty: memory only).
	Dir string

	mu    sync.Mutex
	round int
	hash  [32]byte
	set   []*secagg.Report
}

// forwardedFile holds the last forwarded set in Dir.
const forwardedFile = "secagg-forwarded.bin"

// Aggregate forwards round's reports (or the set already forwarded for
// round) and returns the helper's answer with the reports it was
// computed over: the leader combines exactly those.
func (f *Forwarder) Aggregate(ctx context.Context, st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, []*secagg.Report, error) {
	hash, err := st.Hash()
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	if f.round != round || f.hash != hash {
		f.load(hash, round, st.Params)
	}
	if f.round != round || f.hash != hash {
		if err := f.store(hash, round, reports); err != nil {
			f.mu.Unlock()
			return nil, nil, fmt.Errorf("%w: keeping the round's reports: %v", ErrUnavailable, err)
		}
	}
	set := f.set
	f.mu.Unlock()
	resp, err := f.Client.Aggregate(ctx, st, round, set)
	return resp, set, err
}

// load reads the set in Dir if it is round's of the study with hash.
func (f *Forwarder) load(hash [32]byte, round, d int) {
	if f.Dir == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(f.Dir, forwardedFile))
	if err != nil {
		return
	}
	if set, ok := study.DecodeForwarded(b, hash, round, d); ok {
		f.round, f.hash, f.set = round, hash, set
	}
}

// store makes reports round's set, in memory and, with Dir, on disk
// (written to a temporary file, synced, renamed).
func (f *Forwarder) store(hash [32]byte, round int, reports []*secagg.Report) error {
	if f.Dir != "" {
		b := study.EncodeForwarded(hash, round, reports)
		tmp := filepath.Join(f.Dir, forwardedFile+".tmp")
		fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		_, err = fh.Write(b)
		if err == nil {
			err = fh.Sync()
		}
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, filepath.Join(f.Dir, forwardedFile))
		}
		if err != nil {
			return errors.Join(err, os.Remove(tmp))
		}
	}
	f.round, f.hash, f.set = round, hash, reports
	return nil
}
