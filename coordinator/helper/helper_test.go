package helper

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// fixture is a helper behind httptest, its key and a study naming it.
type fixture struct {
	key    *secagg.PrivateKey
	h      *Helper
	srv    *httptest.Server
	client *Client
	st     protocol.Study
	dir    string
	token  string // the study's leader token
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{key: key, dir: t.TempDir(), token: study.NewToken()}
	f.start(t)
	f.st = protocol.Study{Protocol: protocol.Version, Clients: 4,
		SampleRate: 1, NoiseMultiplier: 2,
		Layers: []int{3, 2, 1}, Params: 11,
		Helper: &protocol.Helper{URL: f.srv.URL, PublicKey: key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(f.token)},
		Settings: protocol.Settings{Name: "test", Epsilon: 10, Delta: 1e-5, Rounds: 3,
			ExpectedClients: 4, ClipNorm: 0.5, LocalEpochs: 1, LearningRate: 0.001,
			History: 3, Horizon: 1, Smoothing: "centered", TrainFraction: 0.9, Hidden: []int{2}}}
	return f
}

// start (re)starts the helper on the fixture's key and state directory,
// with noise seeded by the round count so that tests can recompute it.
func (f *fixture) start(t *testing.T) {
	t.Helper()
	h, err := New(f.key, f.dir, &Options{Noise: func() *rand.Rand { return rand.New(rand.NewPCG(11, 12)) }})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	f.srv = httptest.NewServer(h.Handler())
	t.Cleanup(f.srv.Close)
	if f.client == nil {
		f.client = &Client{Token: f.token}
	}
	f.client.URL = f.srv.URL
}

// reports returns one report per LHA of ks for round.
func (f *fixture) reports(t *testing.T, st *protocol.Study, round int, ks [][]int64) []*secagg.Report {
	t.Helper()
	hash, err := st.Hash()
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := secagg.ParsePublicKey(st.Helper.PublicKey)
	var out []*secagg.Report
	for i, k := range ks {
		r, err := secagg.NewReport(pk, hash, round, uint32(i), k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func updates(d int) [][]int64 {
	return [][]int64{make([]int64, d), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {-5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100}, make([]int64, d)}
}

func helperNoise(t *testing.T, st *protocol.Study) []int64 {
	enc, err := secagg.NewEncoder(st.ClipNorm, st.NoiseMultiplier)
	if err != nil {
		t.Fatal(err)
	}
	z := make([]int64, st.Params)
	enc.Noise().AddTo(z, rand.New(rand.NewPCG(11, 12)))
	return z
}

func TestHelperRoundEndToEnd(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ks := updates(f.st.Params)
	reps := f.reports(t, &f.st, 1, ks)
	resp, err := f.client.Aggregate(ctx, &f.st, 1, reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kept) != 4 || resp.Rejected != 0 || resp.Repeated || !(resp.Epsilon > 0 && resp.Epsilon <= 10) {
		t.Fatalf("response %+v", resp)
	}
	nl := make([]int64, f.st.Params)
	nl[0] = 1000
	z, err := secagg.CombineLeader(resp.Kept, resp.Share, reps, nl)
	if err != nil {
		t.Fatal(err)
	}
	nh := helperNoise(t, &f.st)
	for j := range z {
		want := nl[j] + nh[j]
		for _, k := range ks {
			want += k[j]
		}
		if z[j] != want {
			t.Fatalf("coordinate %d: %d, want Σk + both noises = %d", j, z[j], want)
		}
	}

	// A retry of the same request gets the identical share; other
	// reports for the released round are refused.
	again, err := f.client.Aggregate(ctx, &f.st, 1, reps)
	if err != nil || !again.Repeated || string(again.Share) != string(resp.Share) {
		t.Fatalf("retry: %v, repeated %v", err, again != nil && again.Repeated)
	}
	_, err = f.client.Aggregate(ctx, &f.st, 1, f.reports(t, &f.st, 1, ks))
	wantRefused(t, err, "already aggregated with other reports")
	_, err = f.client.Aggregate(ctx, &f.st, 3, f.reports(t, &f.st, 3, ks))
	wantRefused(t, err, "round 3 is out of order")

	// Rounds 2 and 3, then the cap.
	for r := 2; r <= 3; r++ {
		if _, err := f.client.Aggregate(ctx, &f.st, r, f.reports(t, &f.st, r, ks)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.client.Aggregate(ctx, &f.st, 4, f.reports(t, &f.st, 4, ks))
	wantRefused(t, err, "the study has 3 rounds and all are done")

	e, err := ExportLedger(f.dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Rounds) != 3 || e.Rounds[0].Reports != 4 || e.Rounds[2].Epsilon != e.EpsilonSpent || !(e.Rounds[0].Epsilon < e.Rounds[2].Epsilon) {
		t.Fatalf("export %+v", e)
	}
	hash, _ := f.st.Hash()
	if e.StudySHA256 != hexs(hash) {
		t.Errorf("export study hash %s, want %s", e.StudySHA256, hexs(hash))
	}
}

func hexs(h [32]byte) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range h {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

func wantRefused(t *testing.T, err error, words string) {
	t.Helper()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), words) {
		t.Fatalf("got %v, want a refusal saying %q", err, words)
	}
}

func TestHelperTakesParametersOnlyFromTheSealedStudy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ks := updates(f.st.Params)
	reps := f.reports(t, &f.st, 1, ks)
	// The leader claims a larger clip bound (less noise per unit): the
	// hash changes, no seed opens, and nothing of the LHAs enters the sum.
	lie := f.st
	lie.ClipNorm = 5
	resp, err := f.client.Aggregate(ctx, &lie, 1, reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kept) != 0 || resp.Rejected != 4 {
		t.Fatalf("kept %d, rejected %d under an altered study: want 0 and 4", len(resp.Kept), resp.Rejected)
	}
	// The leader's count does not matter: a fourth report from LHA 1 is
	// left out, and the budget is the study's.
	dup := append(reps, f.reports(t, &f.st, 1, ks)[1])
	resp, err = f.client.Aggregate(ctx, &f.st, 1, dup)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kept) != 4 || resp.Rejected != 1 {
		t.Fatalf("kept %d, rejected %d with a duplicate: want 4 and 1", len(resp.Kept), resp.Rejected)
	}
	poor := f.st
	poor.Epsilon = 0.01
	_, err = f.client.Aggregate(ctx, &poor, 1, f.reports(t, &poor, 1, ks))
	wantRefused(t, err, "beyond the study's budget")
}

func TestHelperRefusesOtherStudies(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other, _ := secagg.GenerateKey()
	cases := []struct {
		name  string
		edit  func(*protocol.Study)
		words string
	}{
		{"another key", func(s *protocol.Study) { s.Helper = &protocol.Helper{PublicKey: other.PublicKey().Bytes()} }, "names another helper key (fingerprint " + other.PublicKey().Fingerprint()},
		{"cyclic", func(s *protocol.Study) { s.Strategy = "cyclic" }, `strategy "cyclic" cannot use a helper`},
		{"example only", func(s *protocol.Study) { s.Privacy = "example" }, "privacy \"example\" cannot use a helper"},
		{"wraps", func(s *protocol.Study) { s.Clients = 1 << 50; s.NoiseMultiplier = 1.0 / 1024 }, "could wrap around"},
	}
	for _, c := range cases {
		st := f.st
		c.edit(&st)
		_, err := f.client.Aggregate(ctx, &st, 1, nil)
		if err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: %v, want %q", c.name, err, c.words)
		}
	}
	if hs, _ := Studies(f.dir); len(hs) != 0 {
		t.Errorf("refused studies left ledgers: %v", hs)
	}
}

// After a crash (the process gone without closing its ledger) between
// commit and answer, the restarted helper answers the retry with the
// identical share and never computes a second one.
func TestHelperCrashBetweenCommitAndAnswer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reps := f.reports(t, &f.st, 1, updates(f.st.Params))
	first, err := f.client.Aggregate(ctx, &f.st, 1, reps)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Close() // the old helper is gone; its ledger is left open, as after kill -9
	_, err = f.client.Aggregate(ctx, &f.st, 1, reps)
	wantRefused(t, err, "cannot be reached")
	f.start(t)
	again, err := f.client.Aggregate(ctx, &f.st, 1, reps)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Repeated || !slices.Equal(again.Share, first.Share) {
		t.Fatal("after the restart the helper released a different share for round 1")
	}
	e, err := ExportLedger(f.dir, "")
	if err != nil || len(e.Rounds) != 1 {
		t.Fatalf("ledger after the crash: %v, %+v", err, e)
	}
}

func TestExportLedgerErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ExportLedger(dir, ""); err == nil || !strings.Contains(err.Error(), "holds no study ledger") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := ExportLedger(dir, "abcd"); err == nil || !strings.Contains(err.Error(), "no ledger of study abcd") {
		t.Errorf("unknown study: %v", err)
	}
}

// A round reopened after its answer was lost (timeout, or a leader killed
// after forwarding) forwards the set it forwarded first, and gets the
// committed share again; a fresh Forwarder finds the set on disk.
func TestForwarderKeepsTheRoundsSet(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	fw := &Forwarder{Client: f.client, Dir: dir}
	first := f.reports(t, &f.st, 1, updates(f.st.Params))
	resp, set, err := fw.Aggregate(ctx, &f.st, 1, first)
	if err != nil || resp.Repeated || len(set) != len(first) {
		t.Fatalf("first: %v, repeated %v", err, resp != nil && resp.Repeated)
	}
	for _, fresh := range []*Forwarder{fw, {Client: f.client, Dir: dir}} {
		again, set, err := fresh.Aggregate(ctx, &f.st, 1, f.reports(t, &f.st, 1, updates(f.st.Params)))
		if err != nil || !again.Repeated || !slices.Equal(again.Share, resp.Share) || set[0].ID != first[0].ID {
			t.Fatalf("reopened round: %v, repeated %v", err, again != nil && again.Repeated)
		}
		if _, err := secagg.CombineLeader(again.Kept, again.Share, set, make([]int64, f.st.Params)); err != nil {
			t.Fatalf("the leader cannot combine the reopened round: %v", err)
		}
	}
	// The next round forwards its own reports.
	second := f.reports(t, &f.st, 2, updates(f.st.Params))
	if resp, set, err := fw.Aggregate(ctx, &f.st, 2, second); err != nil || resp.Repeated || set[0].ID != second[0].ID {
		t.Fatalf("round 2: %v", err)
	}
}

// Only the study's coordinator, which holds the leader token whose hash
// the study value names, can make the helper aggregate (and so spend) a
// round: a request without the token, with another one, or under a study
// value that names another token's hash (a different study, whose seeds
// do not open) is refused or spends nothing of the study.
func TestHelperRefusesUnauthenticatedLeader(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ks := updates(f.st.Params)
	for _, tok := range []string{"", study.NewToken(), f.token[:len(f.token)-1]} {
		_, err := (&Client{URL: f.srv.URL, Token: tok}).Aggregate(ctx, &f.st, 1, f.reports(t, &f.st, 1, ks))
		wantRefused(t, err, "does not carry the study's leader token")
	}
	if hs, _ := Studies(f.dir); len(hs) != 0 {
		t.Fatalf("refused requests left ledgers: %v", hs)
	}
	none := f.st
	none.Helper = &protocol.Helper{URL: f.srv.URL, PublicKey: f.key.PublicKey().Bytes()}
	_, err := (&Client{URL: f.srv.URL}).Aggregate(ctx, &none, 1, nil)
	wantRefused(t, err, "names no leader token")

	// The coordinator's round 1; then an outsider's rounds 2 and 3 are
	// refused and the coordinator's round 2 is still the next.
	reps := f.reports(t, &f.st, 1, ks)
	if _, err := f.client.Aggregate(ctx, &f.st, 1, reps); err != nil {
		t.Fatal(err)
	}
	outsider := &Client{URL: f.srv.URL, Token: study.NewToken()}
	for r := 2; r <= 3; r++ {
		_, err := outsider.Aggregate(ctx, &f.st, r, f.reports(t, &f.st, r, ks))
		wantRefused(t, err, "leader token")
	}
	_, err = outsider.Aggregate(ctx, &f.st, 1, reps) // nor does a replay get the share
	wantRefused(t, err, "leader token")
	// An outsider's own study value (its own token's hash) is another
	// study: the LHAs' seeds do not open under it, and the study's ledger
	// is untouched.
	own := f.st
	own.Helper = &protocol.Helper{URL: f.srv.URL, PublicKey: f.key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(outsider.Token)}
	resp, err := outsider.Aggregate(ctx, &own, 1, f.reports(t, &f.st, 1, ks))
	if err != nil || len(resp.Kept) != 0 {
		t.Fatalf("outsider's own study: %v, kept %v", err, resp)
	}
	hash, _ := f.st.Hash()
	e, err := ExportLedger(f.dir, hexs(hash))
	if err != nil || len(e.Rounds) != 1 {
		t.Fatalf("the study's ledger after the outsider's requests: %v, %+v", err, e)
	}
	if _, err := f.client.Aggregate(ctx, &f.st, 2, f.reports(t, &f.st, 2, ks)); err != nil {
		t.Fatalf("the coordinator's round 2 after the outsider's requests: %v", err)
	}
}
