package helper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// A state directory the helper cannot use is refused when it starts, not
// at the first round (when the coordinator could only abandon it).
func TestNewRefusesUnusableStateDir(t *testing.T) {
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		dir   func(t *testing.T) string
		words string
	}{
		{"a coordinator's state directory", func(t *testing.T) string {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "ledger.db"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return d
		}, "coordinator's state directory"},
		{"a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "helper.state")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "cannot create"},
		{"a directory nobody can write to", func(t *testing.T) string {
			if _, err := os.Stat("/proc/self"); err != nil {
				t.Skip("no /proc on this system")
			}
			return "/proc/self"
		}, "cannot write in /proc/self"},
		{"a read-only directory", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root writes to read-only directories")
			}
			d := t.TempDir()
			if err := os.Chmod(d, 0o500); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(d, 0o700) })
			return d
		}, "cannot write in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := New(key, c.dir(t), nil)
			if err == nil {
				h.Close()
				t.Fatalf("New accepted it; want an error with %q", c.words)
			}
			if !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("error %q; want ErrStateDir with %q", err, c.words)
			}
		})
	}
	// A usable directory is left as it was: the check leaves no file.
	d := t.TempDir()
	h, err := New(key, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if es, _ := os.ReadDir(d); len(es) != 0 {
		t.Fatalf("the state directory holds %v after New", es)
	}
}

// Every aggregation request leaves one line in the helper's log, with the
// study, the round and why it was refused; the helper's own failure says
// so to the coordinator.
func TestHelperLogsEveryRequest(t *testing.T) {
	var logBuf strings.Builder
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h, err := New(key, dir, &Options{Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	f := &fixture{key: key, h: h, srv: srv, dir: dir, token: study.NewToken()}
	f.st = newFixture(t).st
	f.st.Helper = &protocol.Helper{URL: srv.URL, PublicKey: key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(f.token),
		LeaderOperator: "Gesundheitsamt Nord"}
	ks := updates(f.st.Params)
	reps := f.reports(t, &f.st, 1, ks)
	good := &Client{URL: srv.URL, Token: f.token}
	ctx := context.Background()
	hash, _ := f.st.Hash()
	for _, c := range []struct {
		name   string
		do     func() error
		status int    // in the answer's error, 0 for none
		answer string // in the answer's error
		log    []string
	}{
		{"served", func() error { _, err := good.Aggregate(ctx, &f.st, 1, reps); return err }, 0, "",
			[]string{"level=INFO", `msg="round served"`, "round=1", `study=test`, "study_sha256=" + hexs(hash),
				`coordinator="Gesundheitsamt Nord"`, "reports=4", "rejected=0", "epsilon_budget=10", "from=127.0.0.1:"}},
		{"served again", func() error { _, err := good.Aggregate(ctx, &f.st, 1, reps); return err }, 0, "",
			[]string{"level=INFO", "round served again", "round=1"}},
		{"wrong leader token", func() error {
			_, err := (&Client{URL: srv.URL, Token: "wrong"}).Aggregate(ctx, &f.st, 2, f.reports(t, &f.st, 2, ks))
			return err
		}, 403, "leader token", []string{"level=WARN", `msg="request refused"`, "round=2", "status=403", "leader token"}},
		{"not a helper request", func() error {
			resp, err := srv.Client().Post(srv.URL+PathAggregate, "application/json", strings.NewReader("{"))
			if err == nil {
				resp.Body.Close()
			}
			return err
		}, 0, "", []string{"level=WARN", "status=400", "not a helper request"}},
		{"the helper's own failure", func() error {
			// Another study, whose ledger file cannot be created.
			other := f.st
			other.Name = "other"
			oh, _ := other.Hash()
			if err := os.Mkdir(ledgerFile(dir, hexs(oh)), 0o700); err != nil {
				t.Fatal(err)
			}
			_, err := good.Aggregate(ctx, &other, 1, f.reports(t, &other, 1, ks))
			return err
		}, 500, "the helper failed on its own side", []string{"level=ERROR", "round not served", "study=other"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			logBuf.Reset()
			err := c.do()
			if c.answer == "" && err != nil {
				t.Fatal(err)
			}
			if c.answer != "" && (err == nil || !strings.Contains(err.Error(), c.answer)) {
				t.Fatalf("answer %v; want %q", err, c.answer)
			}
			line := logBuf.String()
			if strings.Count(line, "\n") != 1 {
				t.Fatalf("want one log line, got %q", line)
			}
			for _, w := range c.log {
				if !strings.Contains(line, w) {
					t.Errorf("log line %q lacks %q", line, w)
				}
			}
		})
	}
}

// Whoever opens the helper's address in a browser reads what it is and
// its key's fingerprint, instead of "404 page not found".
func TestHelperRootPage(t *testing.T) {
	f := newFixture(t)
	resp, err := f.srv.Client().Get(f.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "fedcast helper") || !strings.Contains(string(b), f.key.PublicKey().Fingerprint()) {
		t.Fatalf("GET /: %d %q", resp.StatusCode, b)
	}
	resp, err = f.srv.Client().Get(f.srv.URL + "/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("GET /nothing: %d, want 404", resp.StatusCode)
	}
}

// A request for a round the helper released earlier says so, instead of
// calling it "out of order" and naming a next round past the study's end.
func TestHelperRefusalWords(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ks := updates(f.st.Params)
	for r := 1; r <= 3; r++ {
		if _, err := f.client.Aggregate(ctx, &f.st, r, f.reports(t, &f.st, r, ks)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		round int
		words string
	}{
		{1, "round 1 was already aggregated (this helper has released rounds 1 to 3 of the study)"},
		{2, "round 2 was already aggregated (this helper has released rounds 1 to 3 of the study)"},
		{3, "round 3 was already aggregated with other reports"},
		{4, "the study has 3 rounds and all are done"},
		{9, "the study has 3 rounds and all are done"},
	} {
		_, err := f.client.Aggregate(ctx, &f.st, c.round, f.reports(t, &f.st, c.round, ks))
		wantRefused(t, err, c.words)
	}
}

// With AllowLeaders the helper serves only the listed coordinators'
// studies: an outsider's own study (its own key-naming value and token,
// served without the list) is refused before any ledger is opened, and
// the allowed coordinator's rounds go on. A list entry that is not a
// SHA-256 is refused at start.
func TestHelperAllowLeaders(t *testing.T) {
	f := newFixture(t)
	h, srv := serveWith(t, f, &Options{AllowLeaders: []string{strings.ToUpper(study.HashToken(f.token))}})
	ctx := context.Background()
	ks := updates(f.st.Params)
	outsider := &Client{URL: srv.URL, Token: study.NewToken()}
	own := f.st
	own.Helper = &protocol.Helper{URL: srv.URL, PublicKey: f.key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(outsider.Token)}
	_, err := outsider.Aggregate(ctx, &own, 1, f.reports(t, &own, 1, ks))
	wantRefused(t, err, "serves only the coordinators its operator allowed")
	if hs, _ := Studies(h.dir); len(hs) != 0 {
		t.Fatalf("a refused study left ledgers: %v", hs)
	}
	allowed := &Client{URL: srv.URL, Token: f.token}
	if _, err := allowed.Aggregate(ctx, &f.st, 1, f.reports(t, &f.st, 1, ks)); err != nil {
		t.Fatalf("the allowed coordinator's round 1: %v", err)
	}
	for _, bad := range []string{"abc", strings.Repeat("z", 64), study.HashToken(f.token)[:62]} {
		if _, err := New(f.key, t.TempDir(), &Options{AllowLeaders: []string{bad}}); !errors.Is(err, ErrAllowLeader) {
			t.Errorf("AllowLeaders %q: %v", bad, err)
		}
	}
}

// TestHelperMaxEpsilon: a study whose lifetime budget is above the
// operator's --max-epsilon is refused before any ledger is opened; one at
// the limit is served; a limit that is not a budget is refused by New.
func TestHelperMaxEpsilon(t *testing.T) {
	f := newFixture(t)
	h, srv := serveWith(t, f, &Options{MaxEpsilon: f.st.Epsilon})
	ctx := context.Background()
	ks := updates(f.st.Params)
	c := &Client{URL: srv.URL, Token: f.token}
	weak := f.st
	weak.Epsilon = 2 * f.st.Epsilon
	_, err := c.Aggregate(ctx, &weak, 1, f.reports(t, &weak, 1, ks))
	wantRefused(t, err, fmt.Sprintf("serves studies with a lifetime budget up to ε = %g", f.st.Epsilon))
	if hs, _ := Studies(h.dir); len(hs) != 0 {
		t.Fatalf("a refused study left ledgers: %v", hs)
	}
	if _, err := c.Aggregate(ctx, &f.st, 1, f.reports(t, &f.st, 1, ks)); err != nil {
		t.Fatalf("a study at the limit, round 1: %v", err)
	}
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("serves studies with a lifetime budget up to ε = %g.", f.st.Epsilon); !strings.Contains(string(b), want) {
		t.Errorf("the helper's page does not give its limit: %q", b)
	}
	for _, bad := range []float64{-1, math.NaN()} {
		if _, err := New(f.key, t.TempDir(), &Options{MaxEpsilon: bad}); !errors.Is(err, ErrMaxEpsilon) {
			t.Errorf("MaxEpsilon %v: %v", bad, err)
		}
	}
}

// serveWith starts a helper with the fixture's key and opt on a test
// server, both closed at the end of the test.
func serveWith(t *testing.T, f *fixture, opt *Options) (*Helper, *httptest.Server) {
	t.Helper()
	h, err := New(f.key, t.TempDir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := httptest.NewServer(h.Handler())
	t.Cleanup(srv.Close)
	return h, srv
}
