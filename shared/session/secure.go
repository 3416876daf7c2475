package session

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// Two-server secure aggregation (shared/secagg; docs/privacy.md): in a
// study with a helper the LHA flips its own Poisson coin every round and
// never sends it, and answers every round with one report: a sharing of
// its encoded update when picked and trained in time, otherwise of zero.

// flipCoin returns true with probability q, from crypto/rand: the LHA's
// own Poisson sampling in a study with a helper. The coin never leaves
// the LHA.
func flipCoin(q float64) bool {
	if q >= 1 {
		return true
	}
	var b [8]byte
	rand.Read(b[:])                                                // never returns an error (crypto/rand)
	u := float64(binary.LittleEndian.Uint64(b[:])>>11) / (1 << 53) // uniform in [0, 1)
	return u < q
}

// secureReport returns LHA number lha's report for round of study st: its
// clipped update encoded on the lattice of round's noise multiplier and
// shared between the servers, or a sharing of zero when update is nil.
// Every report of the study has the same size (secagg.ReportSize).
func secureReport(st *protocol.Study, round, lha int, update []float64) ([]byte, error) {
	if st.Helper == nil {
		return nil, fmt.Errorf("%w: a report for a study without a helper", ErrBadStudy)
	}
	pk, err := secagg.ParsePublicKey(st.Helper.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadStudy, err)
	}
	hash, err := st.Hash()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadStudy, err)
	}
	k := make([]int64, st.Params)
	if update != nil {
		enc, err := secagg.NewEncoder(st.ClipNorm, privacy.MultiplierAt(st.NoiseMultiplier, st.NoiseMultipliers, round))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadStudy, err)
		}
		if len(update) != st.Params {
			return nil, fmt.Errorf("%w: an update of %d values for a model of %d", ErrBadStudy, len(update), st.Params)
		}
		enc.Encode(k, update)
	}
	r, err := secagg.NewReport(pk, hash, round, uint32(lha), k)
	if err != nil {
		return nil, err
	}
	return r.Marshal(), nil
}

// checkHelper checks a study with a helper: it can run with one
// (protocol.Study.CheckSecureAggregation), and the welcome gives this
// LHA's number among the N, which its reports' IDs carry.
func checkHelper(st protocol.Study, w *protocol.Welcome) (int, error) {
	if err := st.CheckSecureAggregation(); err != nil {
		return 0, err
	}
	if w.Index == nil || *w.Index < 0 || *w.Index >= st.Clients {
		return 0, fmt.Errorf("a welcome of a study with a helper without this LHA's number among the N=%d", st.Clients)
	}
	return *w.Index, nil
}

// picked says whether this LHA trains in round m: with a helper its own
// coin (probability q, never sent); otherwise the coordinator's pick.
func (s *Session) picked(m *protocol.RoundStart) bool {
	if s.study.Helper != nil {
		return flipCoin(s.study.SampleRate)
	}
	return m.Picked
}

// reportFrame is round's report frame: the update d when real, else zero.
func (s *Session) reportFrame(round int, real bool, d []float64) (protocol.Kind, []byte, error) {
	var u []float64
	if real {
		u = d
	}
	body, err := secureReport(&s.study, round, s.cyc.index, u)
	if err != nil {
		return 0, nil, err
	}
	return protocol.Encode(&protocol.Report{Round: round, Body: body})
}

// PublicEpsilon returns, in a study with a helper, ε against the public
// after the released rounds: every round's noise multiplier c_t taken as
// √2·c_t (both servers' noise; secagg.PublicNoiseMultiplier, argued), by
// the study's accountant. LocalEpsilon is then each server's ε. 0 without
// a helper or before the first round.
func (s *Session) PublicEpsilon() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.study.Helper == nil || len(s.events) == 0 {
		return 0
	}
	evs := s.studyEvents(len(s.events))
	for i := range evs {
		evs[i].NoiseMultiplier = secagg.PublicNoiseMultiplier(evs[i].NoiseMultiplier)
	}
	eps, err := s.accountant.Epsilon(evs, s.study.Delta)
	if err != nil {
		return math.Inf(1)
	}
	return eps
}
