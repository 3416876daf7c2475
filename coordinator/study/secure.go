package study

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// Two-server secure aggregation (issue 26; shared/secagg): with a helper
// every enrolled LHA is in every round (it flips its own Poisson coin and
// sends a report every round, a sharing of its update or of zero), the
// engine keeps each LHA's report, the driver forwards the reports' IDs and
// sealed seeds to the helper (Reports), and CompleteSecure combines the
// helper's aggregate share with the leader's own sum and noise.

// ErrBadReport is returned by SubmitReport for a report that cannot be
// this LHA's report for this round.
var ErrBadReport = errors.New("study: malformed report")

// ErrHelper is wrapped by CompleteSecure when the helper's answer cannot
// be combined: the round is abandoned, nothing is released and no budget
// is spent.
var ErrHelper = errors.New("study: the helper's aggregate share cannot be used")

// Secure reports whether the study has a helper.
func (e *Engine) Secure() bool { return e.Study.Helper != nil }

// sample returns the next round's LHAs: with a helper all N (each LHA
// samples itself), otherwise the Poisson sample.
func (e *Engine) sample() []int {
	if e.Secure() {
		all := make([]int, len(e.File.LHAs))
		for i := range all {
			all[i] = i
		}
		return all
	}
	return e.State.Sample(e.sampling)
}

// SubmitReport takes LHA lha's report for round (marshalled,
// secagg.Report). It is checked (round open, first report of the LHA, the
// study's size, the round and the LHA's own number in the report ID); a
// refused report counts as rejected and leaves the round.
func (e *Engine) SubmitReport(lha, round int, b []byte) error {
	r := e.current
	if e.finished != "" && r == nil {
		return ErrFinished
	}
	if r == nil || round != r.ID || r.phase != PhaseOpen {
		return fmt.Errorf("%w: report for round %d", ErrStaleRound, round)
	}
	if !e.Secure() {
		return fmt.Errorf("%w: this study has no helper", ErrBadReport)
	}
	if r.done[lha] {
		return fmt.Errorf("%w: round %d", ErrDuplicate, round)
	}
	rep, err := secagg.UnmarshalReport(b, len(e.State.Global))
	switch {
	case err != nil:
	case rep.Round != round:
		err = fmt.Errorf("%w: a report of round %d in round %d", ErrBadReport, rep.Round, round)
	case int64(rep.ID.Client()) != int64(lha):
		err = fmt.Errorf("%w: the report ID names LHA number %d", ErrBadReport, rep.ID.Client())
	}
	if err != nil {
		r.Rejected++
		return err
	}
	if r.reports == nil {
		r.reports = map[int]*secagg.Report{}
	}
	r.reports[lha] = rep
	r.done[lha] = true
	r.Received++
	return nil
}

// Reports returns the open round's reports in LHA order, to forward to
// the helper.
func (e *Engine) Reports() []*secagg.Report {
	r := e.current
	if r == nil {
		return nil
	}
	lhas := make([]int, 0, len(r.reports))
	for lha := range r.reports {
		lhas = append(lhas, lha)
	}
	slices.Sort(lhas)
	out := make([]*secagg.Report, 0, len(lhas))
	for _, lha := range lhas {
		out = append(out, r.reports[lha])
	}
	return out
}

// CompleteSecure closes the open round with the helper's answer, computed
// over reports (the round's, or the set forwarded when the round first
// opened; see HelperFunc): the leader sums its shares of the reports the
// helper kept, adds its own
// discrete Gaussian noise at this round's full σ, adds the helper's
// share, decodes (centred lift, ÷ m) and commits like Complete. An answer
// that does not fit (another study hash, another round, a report the
// leader does not hold, a wrong size) abandons the round: the error wraps
// ErrHelper, nothing is released, no budget is spent, and the engine goes
// on. A ledger failure stops the engine as in Complete.
func (e *Engine) CompleteSecure(resp *protocol.HelperResponse, reports []*secagg.Report, now func() time.Time) (*Result, error) {
	if e.broken != nil {
		return nil, e.broken
	}
	r := e.current
	if r == nil || r.phase != PhaseOpen || !e.Secure() {
		return nil, ErrStaleRound
	}
	r.phase = PhaseAggregating
	abandon := func(format string, a ...any) (*Result, error) {
		e.Abandon()
		return nil, fmt.Errorf("%w: round %d: %s", ErrHelper, r.ID, fmt.Sprintf(format, a...))
	}
	hash, err := e.Study.Hash()
	if err != nil {
		return abandon("%v", err)
	}
	if resp.StudySHA256 != hex.EncodeToString(hash[:]) || resp.Round != r.ID {
		return abandon("the helper answered study %s round %d, this is study %x round %d", resp.StudySHA256, resp.Round, hash, r.ID)
	}
	cfg := e.Config.AtRound(r.ID)
	enc, err := secagg.NewEncoder(cfg.ClipNorm, cfg.NoiseMultiplier)
	if err != nil {
		return abandon("%v", err)
	}
	noise := make([]int64, len(e.State.Global))
	enc.Noise().AddTo(noise, e.noise) // the leader's own noise, at full σ
	z, err := secagg.CombineLeader(resp.Kept, resp.Share, reports, noise)
	if err != nil {
		return abandon("%v", err)
	}
	p, err := e.State.ProposeSum(z, enc.Gamma())
	if err != nil {
		e.broken = fmt.Errorf("study: round %d: %w", r.ID, err)
		e.Abandon()
		return nil, e.broken
	}
	r.Received = len(resp.Kept)
	r.Rejected += resp.Rejected
	r.reports = nil
	return e.commitPending(r, p, now)
}

// PublicEpsilon returns, in a study with a helper, ε against the public
// after the committed rounds: each round's c_t taken as √2·c_t (both
// servers' noise; secagg.PublicNoiseMultiplier, argued), by the study's
// accountant. 0 without a helper or before the first round.
func (e *Engine) PublicEpsilon() float64 { return e.publicEpsilonAfter(e.State.Round) }

// publicEpsilonAfter is PublicEpsilon after the first n rounds.
func (e *Engine) publicEpsilonAfter(n int) float64 {
	if !e.Secure() || n <= 0 {
		return 0
	}
	evs := e.Config.PrivacyEvents(n)
	for i := range evs {
		evs[i].NoiseMultiplier = secagg.PublicNoiseMultiplier(evs[i].NoiseMultiplier)
	}
	eps, err := privacy.EpsilonFor(e.Config.AccountantKind(), evs, e.State.Delta)
	if err != nil {
		return math.NaN()
	}
	return eps
}
