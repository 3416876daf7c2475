package helper

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// A Refusal is a request the helper will not serve, with the HTTP status
// it answers and words for the operators.
type Refusal struct {
	Status int
	Msg    string
}

func (r *Refusal) Error() string { return "helper: " + r.Msg }

func refuse(status int, format string, a ...any) error {
	return &Refusal{Status: status, Msg: fmt.Sprintf(format, a...)}
}

// Options configure a Helper.
type Options struct {
	// Noise returns the generator of one round's noise. Defaults to
	// privacy.NewSecureRand (crypto-seeded); tests inject seeded ones.
	Noise func() *rand.Rand
	// Now defaults to time.Now.
	Now func() time.Time
	// AfterCommit, if set, runs after a round's share is committed and
	// before it is answered (crash tests: `fedcast helper serve` sets it
	// from FEDCAST_TEST_HELPER_PAUSE_AFTER_COMMIT).
	AfterCommit func(round int)
	// AllowLeaders, when not empty, lists the only leader tokens (by
	// their hex SHA-256, protocol.Helper.LeaderTokenSHA256) whose studies
	// this helper serves: a study value naming another is refused before
	// any ledger is opened, so nobody else who reaches the helper can
	// make it keep ledgers of studies of their own. Empty: every study
	// that names this helper's key and carries its own leader token.
	AllowLeaders []string
	// MaxEpsilon, when > 0, is the largest lifetime budget ε of a study
	// this helper serves: the operator's own policy, since the helper
	// adds half of the protection and should not lend it to a study
	// whose promise it finds too weak. A study above it is refused before
	// any ledger is opened. 0: no limit (fedcast helper serve defaults
	// to 10).
	MaxEpsilon float64
	// Log receives one line per request the helper answers: the round
	// served (or served again), or the refusal and why, or the helper's
	// own failure, with the study, its coordinator and the caller's
	// address. Defaults to discarding.
	Log *slog.Logger
}

// A Helper serves aggregation requests for any number of studies. Its
// methods are safe for concurrent use (requests are served one at a time).
type Helper struct {
	key     *secagg.PrivateKey
	dir     string
	opt     Options
	mu      sync.Mutex
	ledgers map[string]*Ledger
}

// New returns a helper with key and its state directory dir (created if
// needed, mode 0700). opt may be nil. A directory the helper cannot write
// to, or a coordinator's state directory, is refused here rather than at
// the first round.
func New(key *secagg.PrivateKey, dir string, opt *Options) (*Helper, error) {
	if err := checkStateDir(dir); err != nil {
		return nil, err
	}
	h := &Helper{key: key, dir: dir, ledgers: map[string]*Ledger{}}
	if opt != nil {
		h.opt = *opt
	}
	if h.opt.Log == nil {
		h.opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h.opt.AllowLeaders = slices.Clone(h.opt.AllowLeaders)
	for i, a := range h.opt.AllowLeaders {
		if b, err := hex.DecodeString(a); err != nil || len(b) != 32 {
			return nil, fmt.Errorf("%w: %q is not a leader token's SHA-256 (64 hexadecimal digits, as 'fedcast study new --helper' prints it)", ErrAllowLeader, a)
		}
		h.opt.AllowLeaders[i] = strings.ToLower(a)
	}
	if m := h.opt.MaxEpsilon; m < 0 || math.IsNaN(m) {
		return nil, fmt.Errorf("%w: %v is not a budget (a number above 0, or 0 for no limit)", ErrMaxEpsilon, m)
	}
	if h.opt.Noise == nil {
		h.opt.Noise = privacy.NewSecureRand
	}
	if h.opt.Now == nil {
		h.opt.Now = time.Now
	}
	return h, nil
}

// ErrAllowLeader: an Options.AllowLeaders entry is not a SHA-256.
var ErrAllowLeader = errors.New("helper: bad allowed leader")

// ErrMaxEpsilon: Options.MaxEpsilon is negative or NaN.
var ErrMaxEpsilon = errors.New("helper: bad largest budget")

// ErrStateDir wraps every reason a directory cannot be the helper's state
// directory.
var ErrStateDir = errors.New("helper: unusable state directory")

// checkStateDir creates dir if needed and makes sure the helper can write
// its ledgers there: a coordinator's state directory (it holds ledger.db)
// is refused, and so is one where a file cannot be created and synced.
func checkStateDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "ledger.db")); err == nil {
		return fmt.Errorf("%w: %s holds ledger.db, so it is a coordinator's state directory (fedcast serve --state); "+
			"give the helper a directory of its own, e.g. --state helper.state", ErrStateDir, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w: cannot create %s: %v", ErrStateDir, dir, err)
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err == nil {
		_, err = f.Write([]byte("fedcast helper\n"))
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		os.Remove(f.Name())
	}
	if err != nil {
		return fmt.Errorf("%w: cannot write in %s (%v): the helper records every round there before it answers", ErrStateDir, dir, err)
	}
	return nil
}

// PublicKey returns the helper's public key.
func (h *Helper) PublicKey() *secagg.PublicKey { return h.key.PublicKey() }

// Close closes the ledgers.
func (h *Helper) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for k, l := range h.ledgers {
		errs = append(errs, l.Close())
		delete(h.ledgers, k)
	}
	return errors.Join(errs...)
}

// ledger returns the open ledger of study hash hx, opening it if needed.
func (h *Helper) ledger(hx string, study []byte) (*Ledger, error) {
	if l, ok := h.ledgers[hx]; ok {
		return l, nil
	}
	l, err := openLedger(h.dir, hx)
	if err != nil {
		return nil, err
	}
	if err := l.init(study, h.opt.Now()); err != nil {
		l.Close()
		return nil, err
	}
	h.ledgers[hx] = l
	return l, nil
}

// checkStudy refuses a study this helper must not aggregate.
func (h *Helper) checkStudy(st *protocol.Study) error {
	if st.Helper == nil {
		return refuse(http.StatusBadRequest, "the study names no helper")
	}
	if !bytes.Equal(st.Helper.PublicKey, h.key.PublicKey().Bytes()) {
		other := "unreadable"
		if pk, err := secagg.ParsePublicKey(st.Helper.PublicKey); err == nil {
			other = pk.Fingerprint()
		}
		return refuse(http.StatusConflict, "the study names another helper key (fingerprint %s); this helper's key is %s",
			other, h.key.PublicKey().Fingerprint())
	}
	if err := st.CheckSecureAggregation(); err != nil {
		return refuse(http.StatusBadRequest, "%v", err)
	}
	if st.Params < 1 || st.Params > protocol.MaxWeights {
		return refuse(http.StatusBadRequest, "the study's model has %d parameters", st.Params)
	}
	if !(st.Epsilon > 0) || st.Rounds < 1 || st.Clients < 1 {
		return refuse(http.StatusBadRequest, "the study has no budget, rounds or LHAs (ε = %v, T = %d, N = %d)", st.Epsilon, st.Rounds, st.Clients)
	}
	return nil
}

// checkLeader refuses a request that does not carry the study's leader
// token: the study value names its SHA-256, and the LHAs sealed their
// seeds under that value's hash, so only the study's coordinator can make
// this helper spend the study's rounds. A study value that names no token
// is refused (study new always makes one).
func checkLeader(st *protocol.Study, token string) error {
	if st.Helper.LeaderTokenSHA256 == "" {
		return refuse(http.StatusBadRequest, "the study names no leader token (helper.leader_token_sha256), so this helper "+
			"cannot tell its coordinator from anyone else; create the study with fedcast study new --helper, which makes one")
	}
	if !study.TokenMatches(token, st.Helper.LeaderTokenSHA256) {
		return refuse(http.StatusForbidden, "the request does not carry the study's leader token: only the study's "+
			"coordinator may ask for its rounds (nothing was aggregated or spent)")
	}
	return nil
}

// checkAllowed refuses a study whose budget is above Options.MaxEpsilon,
// or whose leader token is not among Options.AllowLeaders (when the
// operator gave any).
func (h *Helper) checkAllowed(st *protocol.Study) error {
	if m := h.opt.MaxEpsilon; m > 0 && !(st.Epsilon <= m) {
		return refuse(http.StatusForbidden, "this helper serves studies with a lifetime budget up to ε = %g (its operator's policy, helper serve --max-epsilon), "+
			"and this study's is ε = %g (nothing was aggregated or spent); create the study with a smaller --epsilon", m, st.Epsilon)
	}
	if len(h.opt.AllowLeaders) == 0 || slices.Contains(h.opt.AllowLeaders, strings.ToLower(st.Helper.LeaderTokenSHA256)) {
		return nil
	}
	return refuse(http.StatusForbidden, "this helper serves only the coordinators its operator allowed (helper serve --allow-leader), "+
		"and this study's leader token (SHA-256 %s) is not among them (nothing was aggregated or spent)", st.Helper.LeaderTokenSHA256)
}

// epsilonAfter returns ε after rounds rounds of the study, by its own
// accountant, from the study value alone.
func epsilonAfter(st *protocol.Study, rounds int) (float64, error) {
	cfg, err := st.FLConfig()
	if err != nil {
		return 0, err
	}
	a, err := cfg.Accounting()
	if err != nil {
		return 0, err
	}
	return privacy.EpsilonAfter(a, cfg.PrivacyEvents(rounds), nil, st.Delta)
}

// Aggregate serves one round (see the package doc). Refusals are
// *Refusal; other errors are the helper's own (status 500).
func (h *Helper) Aggregate(req *protocol.HelperRequest) (*protocol.HelperResponse, error) {
	st := &req.Study
	if err := h.checkStudy(st); err != nil {
		return nil, err
	}
	if err := checkLeader(st, req.LeaderToken); err != nil {
		return nil, err // before any ledger is opened: a refused request spends nothing
	}
	if err := h.checkAllowed(st); err != nil {
		return nil, err
	}
	hash, err := st.Hash()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%v", err)
	}
	canon, _ := st.CanonicalJSON()
	hx := hex.EncodeToString(hash[:])
	h.mu.Lock()
	defer h.mu.Unlock()
	l, err := h.ledger(hx, canon)
	if err != nil {
		return nil, err
	}
	done, err := l.releases(true)
	if err != nil {
		return nil, err
	}
	digest := requestDigest(req)
	if n := len(done); n > 0 && req.Round == n {
		last := done[n-1]
		if last.RequestSHA256 != digest {
			return nil, refuse(http.StatusConflict, "round %d was already aggregated with other reports; the helper releases one share per round", req.Round)
		}
		return response(hx, &last, true), nil
	}
	switch n := len(done); {
	case req.Round >= 1 && req.Round < n:
		return nil, refuse(http.StatusConflict, "round %d was already aggregated (this helper has released rounds 1 to %d of the study); "+
			"the helper releases one share per round", req.Round, n)
	case n >= st.Rounds:
		return nil, refuse(http.StatusConflict, "the study has %d rounds and all are done", st.Rounds)
	case req.Round != n+1:
		return nil, refuse(http.StatusConflict, "round %d is out of order: this helper has released %d rounds of the study, so the next is %d",
			req.Round, n, n+1)
	}
	eps, err := epsilonAfter(st, req.Round)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%v", err)
	}
	if !(eps <= st.Epsilon) {
		return nil, refuse(http.StatusConflict, "round %d would spend ε = %.4g, beyond the study's budget ε = %g", req.Round, eps, st.Epsilon)
	}
	if len(req.Reports) > 2*st.Clients {
		return nil, refuse(http.StatusBadRequest, "%d reports for a study of %d LHAs", len(req.Reports), st.Clients)
	}
	rel, err := h.release(st, hash, req, eps)
	if err != nil {
		return nil, err
	}
	rel.RequestSHA256 = digest
	if err := l.commit(rel); err != nil { // commit before release
		return nil, err
	}
	if h.opt.AfterCommit != nil {
		h.opt.AfterCommit(req.Round)
	}
	return response(hx, rel, false), nil
}

// release computes the round's aggregate share: the sum of the expanded
// seeds that open, plus the helper's own noise at round t's σ.
func (h *Helper) release(st *protocol.Study, hash [32]byte, req *protocol.HelperRequest, eps float64) (*Release, error) {
	cfg, err := st.FLConfig()
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%v", err)
	}
	c := cfg.NoiseMultiplierAt(req.Round)
	enc, err := secagg.NewEncoder(st.ClipNorm, c)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "%v", err)
	}
	sum, kept, rejected := secagg.HelperSum(h.key, hash, req.Round, st.Clients, st.Params, req.Reports)
	sum.AddNoise(enc.Noise(), h.opt.Noise())
	return &Release{
		Round: req.Round, Reports: len(kept), Rejected: len(rejected), SampleRate: cfg.SampleRate(),
		NoiseMultiplier: c, Epsilon: eps, Delta: st.Delta, Released: h.opt.Now(),
		Kept: kept, Share: secagg.MarshalShare(sum.Share()),
	}, nil
}

func response(hx string, r *Release, repeated bool) *protocol.HelperResponse {
	kept := r.Kept
	if kept == nil {
		kept = []secagg.ReportID{}
	}
	return &protocol.HelperResponse{StudySHA256: hx, Round: r.Round, Kept: kept, Rejected: r.Rejected,
		Share: r.Share, Epsilon: r.Epsilon, Repeated: repeated}
}
