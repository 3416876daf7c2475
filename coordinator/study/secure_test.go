package study

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// secureStudy returns a small study of n LHAs with a helper, and the
// helper's key.
func secureStudy(t *testing.T, n int) (*File, []byte, *secagg.PrivateKey) {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := Create(CreateOptions{Names: names(n), Template: File{
		Helper: &HelperRef{URL: "http://helper.test", PublicKey: key.PublicKey().Bytes()},
		Settings: protocol.Settings{Name: "secure", Epsilon: 3, Rounds: 4, ExpectedClients: n / 2, History: 4, Horizon: 2,
			Hidden: []int{8, 4}, LocalEpochs: 5, LearningRate: 0.01,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw, key
}

// helperAnswer is the helper's answer to the engine's reports, with its
// noise at zero.
func helperAnswer(t *testing.T, e *Engine, key *secagg.PrivateKey, round int) *protocol.HelperResponse {
	t.Helper()
	hash, _ := e.Study.Hash()
	var fwd []secagg.Sealed
	for _, r := range e.Reports() {
		fwd = append(fwd, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	sum, kept, rej := secagg.HelperSum(key, hash, round, e.Study.Clients, e.Study.Params, fwd)
	sum.AddNoiseVector(make([]int64, e.Study.Params))
	return &protocol.HelperResponse{StudySHA256: hexHash(hash), Round: round, Kept: kept, Rejected: len(rej),
		Share: secagg.MarshalShare(sum.Share())}
}

func hexHash(h [32]byte) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 64)
	for _, c := range h {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b)
}

func TestSecureRound(t *testing.T) {
	const n = 4
	f, raw, key := secureStudy(t, n)
	seed := uint64(7)
	path := filepath.Join(t.TempDir(), "ledger.db")
	e := openEngine(t, f, raw, path, &seed)
	if !e.Secure() || e.Study.Helper == nil {
		t.Fatal("the engine does not see the helper")
	}
	d := e.Study.Params
	w0 := slices.Clone(e.Global())
	hash, _ := e.Study.Hash()
	pk, _ := secagg.ParsePublicKey(e.Study.Helper.PublicKey)
	enc, _ := secagg.NewEncoder(e.Config.ClipNorm, e.Config.NoiseMultiplierAt(1))

	// A helper that is down: the round is abandoned, nothing spent.
	r, err := e.Begin(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sampled) != n {
		t.Fatalf("with a helper every LHA is in every round: %d of %d", len(r.Sampled), n)
	}
	bad := &protocol.HelperResponse{StudySHA256: "00", Round: 1}
	if _, err := e.CompleteSecure(bad, nil, e.now); !errors.Is(err, ErrHelper) {
		t.Fatalf("an answer for another study: %v", err)
	}
	if e.Rounds() != 0 || e.EpsilonSpent() != 0 || e.Current() != nil || e.Err() != nil {
		t.Fatalf("abandoned round left rounds %d, ε %v, current %v, err %v", e.Rounds(), e.EpsilonSpent(), e.Current(), e.Err())
	}

	if _, err := e.Begin(nil); err != nil {
		t.Fatal(err)
	}
	sum := make([]int64, d)
	for lha := range n {
		u := make([]float64, d)
		u[lha] = 0.1 * float64(lha+1)
		k := make([]int64, d)
		enc.Encode(k, u)
		for j := range k {
			sum[j] += k[j]
		}
		rep, err := secagg.NewReport(pk, hash, 1, uint32(lha), k)
		if err != nil {
			t.Fatal(err)
		}
		if lha == 1 {
			if err := e.SubmitReport(2, 1, rep.Marshal()); !errors.Is(err, ErrBadReport) {
				t.Fatalf("LHA 1's report submitted by LHA 2: %v", err)
			}
		}
		if err := e.SubmitReport(lha, 1, rep.Marshal()); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SubmitReport(0, 1, e.Reports()[0].Marshal()); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second report: %v", err)
	}
	if err := e.SubmitReport(3, 2, e.Reports()[3].Marshal()); !errors.Is(err, ErrStaleRound) {
		t.Fatalf("report for round 2: %v", err)
	}
	res, err := e.CompleteSecure(helperAnswer(t, e, key, 1), e.Reports(), e.now)
	if err != nil {
		t.Fatal(err)
	}
	// global = w0 + γ/m·(Σk + the leader's noise from the research seed).
	noise := make([]int64, d)
	enc.Noise().AddTo(noise, fl.NewRand(seed, fl.StreamNoise))
	step := enc.Gamma() / float64(e.Config.ExpectedClients)
	for j := range w0 {
		want := w0[j] + float64(sum[j]+noise[j])*step
		if math.Float64bits(res.Weights[j]) != math.Float64bits(want) {
			t.Fatalf("weight %d: %v, want %v", j, res.Weights[j], want)
		}
	}
	if res.Event.Round != 1 || !(res.Event.Epsilon > 0) || res.Event.NoiseMultiplier != e.Config.NoiseMultiplierAt(1) {
		t.Fatalf("event %+v", res.Event)
	}
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	// The ledger export marks the round and gives both figures.
	var ex struct {
		Rounds []struct {
			Epsilon           float64  `json:"epsilon"`
			SecureAggregation bool     `json:"secure_aggregation"`
			EpsilonPublic     *float64 `json:"epsilon_public"`
		}
	}
	b, err := LedgerExportForTest(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatal(err)
	}
	if len(ex.Rounds) != 1 {
		t.Fatalf("ledger holds %d rounds", len(ex.Rounds))
	}
	lr := ex.Rounds[0]
	if !lr.SecureAggregation || lr.Epsilon != res.Event.Epsilon || lr.EpsilonPublic == nil || !(*lr.EpsilonPublic < lr.Epsilon) {
		t.Fatalf("ledger round: secure %v, ε %v (event %v), public %v", lr.SecureAggregation, lr.Epsilon, res.Event.Epsilon, lr.EpsilonPublic)
	}
}

func TestSecureStudyRefusals(t *testing.T) {
	key, _ := secagg.GenerateKey()
	for _, c := range []struct {
		name  string
		edit  func(*File)
		words string
	}{
		{"cyclic", func(f *File) { f.Strategy = "cyclic"; f.ExpectedClients = 4 }, `strategy "cyclic" cannot use a helper: it hands the model from LHA to LHA`},
		{"example", func(f *File) { f.Privacy = "example"; f.Epsilon = 0; f.ExampleEpsilon = 2 }, `privacy "example" cannot use a helper`},
		{"bad url", func(f *File) { f.Helper.URL = "helper" }, "helper.url"},
		{"bad key", func(f *File) { f.Helper.PublicKey = []byte{1, 2} }, "helper.public_key"},
		{"bad fingerprint", func(f *File) { f.Helper.Fingerprint = "0000" }, "helper.fingerprint"},
		{"short leader token", func(f *File) { f.Helper.LeaderToken = "secret" }, "helper.leader_token is 6 characters"},
	} {
		tmpl := File{Helper: &HelperRef{URL: "http://h", PublicKey: key.PublicKey().Bytes()},
			Settings: protocol.Settings{Name: "s", Epsilon: 3, Rounds: 4, ExpectedClients: 2, History: 4, Horizon: 2, Hidden: []int{8},
				LocalEpochs: 5, LearningRate: 0.01}}
		c.edit(&tmpl)
		if _, _, err := Create(CreateOptions{Names: names(4), Template: tmpl}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: %v, want ErrConfig saying %q", c.name, err, c.words)
		}
	}
}

// Create gives a study with a helper a fresh leader token (the template is
// left alone), the study value sent to everyone names only its SHA-256,
// and a study file without one is refused when it is read.
func TestSecureLeaderToken(t *testing.T) {
	key, _ := secagg.GenerateKey()
	ref := &HelperRef{URL: "http://h", PublicKey: key.PublicKey().Bytes()}
	tmpl := File{Helper: ref, Settings: protocol.Settings{Name: "s", Epsilon: 3, Rounds: 4, ExpectedClients: 2,
		History: 4, Horizon: 2, Hidden: []int{8}, LocalEpochs: 5, LearningRate: 0.01}}
	f, _, err := Create(CreateOptions{Names: names(4), Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := Create(CreateOptions{Names: names(4), Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	tok := f.Helper.LeaderToken
	if len(tok) < 43 || tok == g.Helper.LeaderToken || ref.LeaderToken != "" {
		t.Fatalf("leader tokens %q and %q, template's %q: want two fresh ones and the template untouched", tok, g.Helper.LeaderToken, ref.LeaderToken)
	}
	pub := f.Public(4, false)
	if pub.Helper.LeaderTokenSHA256 != HashToken(tok) {
		t.Errorf("the study value names %q, want the token's SHA-256", pub.Helper.LeaderTokenSHA256)
	}
	if b, _ := pub.CanonicalJSON(); strings.Contains(string(b), tok) {
		t.Error("the study value sent to the LHAs and the helper holds the leader token itself")
	}
	raw, _ := f.Marshal()
	if _, err := Parse(raw); err != nil {
		t.Fatalf("the written study file does not read back: %v", err)
	}
	f.Helper.LeaderToken = ""
	raw, _ = f.Marshal()
	if _, err := Parse(raw); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "helper.leader_token") {
		t.Errorf("a study file without a leader token: %v", err)
	}
}

// A noise schedule with a helper: round t is noised and accounted at c_t
// by the leader (its own noise on c_t's lattice, CompleteSecure), and the
// study runs to its end.
func TestSecureNoiseSchedule(t *testing.T) {
	key, _ := secagg.GenerateKey()
	f, _, err := Create(CreateOptions{Names: names(4), Template: File{
		Helper: &HelperRef{URL: "http://helper.test", PublicKey: key.PublicKey().Bytes()},
		Settings: protocol.Settings{Name: "schedule", Epsilon: 3, Rounds: 3, ExpectedClients: 2, History: 4, Horizon: 2,
			Hidden: []int{8, 4}, LocalEpochs: 5, LearningRate: 0.01, NoiseSchedule: "linear:2",
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := f.Marshal()
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "ledger.db"), nil)
	cs := e.Study.NoiseMultipliers
	if len(cs) != 3 || cs[0] == cs[2] {
		t.Fatalf("schedule %v", cs)
	}
	hash, _ := e.Study.Hash()
	pk, _ := secagg.ParsePublicKey(e.Study.Helper.PublicKey)
	for round := 1; round <= 3; round++ {
		if _, err := e.Begin(nil); err != nil {
			t.Fatal(err)
		}
		for lha := range 4 {
			rep, err := secagg.NewReport(pk, hash, round, uint32(lha), make([]int64, e.Study.Params))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.SubmitReport(lha, round, rep.Marshal()); err != nil {
				t.Fatal(err)
			}
		}
		res, err := e.CompleteSecure(helperAnswer(t, e, key, round), e.Reports(), e.now)
		if err != nil {
			t.Fatal(err)
		}
		if res.Event.NoiseMultiplier != cs[round-1] {
			t.Fatalf("round %d: c %v, want c_t %v", round, res.Event.NoiseMultiplier, cs[round-1])
		}
		if err := e.Release(); err != nil {
			t.Fatal(err)
		}
	}
}
