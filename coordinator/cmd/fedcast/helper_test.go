package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// leaderToken is the test studies' leader token (study.HelperRef.LeaderToken).
var leaderToken = study.NewToken()

func TestHelperKeygen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	code, out, errs := fedcast(t, "helper", "keygen", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := os.Stat(filepath.Join(dir, "helper.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("helper.key: %v, mode %v (want 0600)", err, st.Mode().Perm())
	}
	pubBytes, err := os.ReadFile(filepath.Join(dir, "helper.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := secagg.ParsePublicFile("helper.pub", pubBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "helper key fingerprint: "+pub.Fingerprint()) {
		t.Errorf("keygen did not print the fingerprint %s:\n%s", pub.Fingerprint(), out)
	}
	k, err := loadHelperKey(filepath.Join(dir, "helper.key"))
	if err != nil || k.PublicKey().Fingerprint() != pub.Fingerprint() {
		t.Fatalf("helper.key does not match helper.pub: %v", err)
	}
	code, _, errs = fedcast(t, "helper", "keygen", "--out", dir)
	if code == 0 || !strings.Contains(errs, "never overwritten") {
		t.Errorf("second keygen into the same directory: exit %d, %s", code, errs)
	}
	code, _, errs = fedcast(t, "helper", "serve", "--key", filepath.Join(dir, "helper.pub"), "--state", t.TempDir())
	if code == 0 || !strings.Contains(errs, "field private_key is missing") {
		t.Errorf("serve with the public file: exit %d, %s", code, errs)
	}
	code, _, errs = fedcast(t, "helper", "frobnicate")
	if code != 2 || !strings.Contains(errs, "helper keygen") {
		t.Errorf("unknown subcommand: exit %d, %s", code, errs)
	}
}

// The helper serves over HTTP and `fedcast ledger export --state
// HELPER_DIR` prints its own record of the rounds.
func TestHelperServeAndLedgerExport(t *testing.T) {
	key, _ := secagg.GenerateKey()
	state := t.TempDir()
	h, err := helper.New(key, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveHelper(ctx, h, ln) }()
	st := protocol.Study{Protocol: protocol.Version, Clients: 2,
		SampleRate: 1, NoiseMultiplier: 2, Params: 3,
		Helper: &protocol.Helper{URL: "http://" + ln.Addr().String(), PublicKey: key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(leaderToken)},
		Settings: protocol.Settings{Epsilon: 10, Delta: 1e-5, Rounds: 2, ExpectedClients: 2,
			ClipNorm: 0.5, LocalEpochs: 1, LearningRate: 0.001}}
	hash, _ := st.Hash()
	c := &helper.Client{URL: st.Helper.URL, Token: leaderToken}
	for round := 1; round <= 2; round++ {
		var reps []*secagg.Report
		for i := range 2 {
			r, err := secagg.NewReport(key.PublicKey(), hash, round, uint32(i), []int64{1, 2, 3})
			if err != nil {
				t.Fatal(err)
			}
			reps = append(reps, r)
		}
		if _, err := c.Aggregate(ctx, &st, round, reps); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h.Close()
	code, out, errs := fedcast(t, "ledger", "export", "--state", state)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var e helper.Export
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if e.Format != helper.LedgerFormat || len(e.Rounds) != 2 || e.Rounds[1].Round != 2 || e.Rounds[0].Reports != 2 {
		t.Fatalf("helper ledger export: %s", out)
	}
	code, _, errs = fedcast(t, "ledger", "export", "--state", state, "--study", "00")
	if code == 0 || !strings.Contains(errs, "no ledger of study 00") {
		t.Errorf("unknown --study: exit %d, %s", code, errs)
	}
}

func TestStudyNewWithHelper(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if code, _, errs := fedcast(t, "helper", "keygen", "--out", keys); code != 0 {
		t.Fatal(errs)
	}
	pub := filepath.Join(keys, "helper.pub")
	out := filepath.Join(dir, "study.json")
	code, stdout, errs := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "2", "--helper", "http://127.0.0.1:8090",
		"--helper-key", pub, "--helper-operator", "Helper e.V.", "--operator", "Gesundheitsamt Nord", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	f, _, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := loadHelperKey(filepath.Join(keys, "helper.key"))
	if f.Helper == nil || f.Helper.URL != "http://127.0.0.1:8090" || f.Helper.Operator != "Helper e.V." || f.Helper.LeaderOperator != "Gesundheitsamt Nord" ||
		f.Helper.Fingerprint != k.PublicKey().Fingerprint() || !strings.Contains(stdout, k.PublicKey().Fingerprint()) {
		t.Fatalf("helper field %+v; output:\n%s", f.Helper, stdout)
	}
	if st := f.Public(1, false); st.Helper == nil || string(st.Helper.PublicKey) != string(k.PublicKey().Bytes()) ||
		st.Helper.LeaderTokenSHA256 != study.HashToken(f.Helper.LeaderToken) {
		t.Fatal("the public study value does not carry the helper's key and the leader token's hash")
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 || len(f.Helper.LeaderToken) < 43 ||
		!strings.Contains(stdout, "secret leader token") {
		t.Fatalf("study file %v (%v), leader token %d characters; output:\n%s", fi.Mode(), err, len(f.Helper.LeaderToken), stdout)
	}
	// The helper's operator is told how to serve only this coordinator.
	if !strings.Contains(stdout, "'fedcast helper serve --allow-leader "+study.HashToken(f.Helper.LeaderToken)+"'") || strings.Contains(stdout, f.Helper.LeaderToken) {
		t.Errorf("study new does not give the helper's --allow-leader (or shows the token itself):\n%s", stdout)
	}
	// ε = 2 is within a helper's default limit; ε = 12 is not, and says so.
	if strings.Contains(stdout, "--max-epsilon") {
		t.Errorf("a warning about the helper's limit at ε = 2:\n%s", stdout)
	}
	_, weak, _ := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "12", "--helper", "http://h", "--helper-key", pub, "--out", filepath.Join(t.TempDir(), "s.json"))
	if !strings.Contains(weak, "a helper refuses a study above ε = 10 unless its operator starts it with --max-epsilon 12 or more") {
		t.Errorf("no warning about the helper's limit at ε = 12:\n%s", weak)
	}
	// Both designs with FedAvg, MR-MTL, local DP-SGD (privacy both) and a
	// noise schedule are accepted with a helper.
	for _, extra := range [][]string{{"--preset", "paper"}, {"--strategy", "mrmtl", "--lambda", "1"},
		{"--privacy", "both", "--example-epsilon", "4"}, {"--noise-schedule", "linear:2"}} {
		args := append([]string{"study", "new", "--lhas", "3", "--epsilon", "2", "--helper", "http://h", "--helper-key", pub,
			"--out", filepath.Join(t.TempDir(), "s.json")}, extra...)
		if code, _, errs := fedcast(t, args...); code != 0 {
			t.Errorf("%v with a helper: exit %d, %s", extra, code, errs)
		}
	}
	for _, c := range []struct {
		args  []string
		words string
	}{
		{[]string{"--strategy", "cyclic", "--helper", "http://h", "--helper-key", pub}, "cyclic\" cannot use a helper"},
		{[]string{"--helper", "http://h"}, "--helper and --helper-key go together"},
		{[]string{"--helper", "ftp://h", "--helper-key", pub}, "helper.url is \"ftp://h\""},
		{[]string{"--helper", "http://h", "--helper-key", filepath.Join(keys, "nope.pub")}, "--helper-key"},
	} {
		args := append([]string{"study", "new", "--lhas", "3", "--epsilon", "2", "--out", filepath.Join(t.TempDir(), "s.json")}, c.args...)
		code, _, errs := fedcast(t, args...)
		if code == 0 || !strings.Contains(errs, c.words) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, errs, c.words)
		}
	}
}

// The operator's plausible mistakes with `helper serve` each get words
// that say what to do, with no Go package prefix twice.
func TestHelperServeMistakes(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if code, _, errs := fedcast(t, "helper", "keygen", "--out", keys); code != 0 {
		t.Fatal(errs)
	}
	key := filepath.Join(keys, "helper.key")
	coordState := filepath.Join(dir, "study.state")
	os.MkdirAll(coordState, 0o700)
	os.WriteFile(filepath.Join(coordState, "ledger.db"), nil, 0o600)
	studyFile := filepath.Join(dir, "study.json")
	os.WriteFile(studyFile, []byte(`{"version":1,"name":"x"}`), 0o600)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name  string
		args  []string
		words []string
	}{
		{"no such key file", []string{"--key", filepath.Join(dir, "nokey"), "--state", t.TempDir()},
			[]string{"cannot read the helper's key", "hint: --key is the helper.key file that 'fedcast helper keygen --out DIR' wrote"}},
		{"the study file as key", []string{"--key", studyFile, "--state", t.TempDir()},
			[]string{studyFile + " is not a helper key", "hint: --key is the helper.key"}},
		{"the coordinator's state directory", []string{"--key", key, "--state", coordState, "--addr", "127.0.0.1:0"},
			[]string{"is a coordinator's state directory", "hint: choose another --state"}},
		{"a bad --allow-leader", []string{"--key", key, "--state", t.TempDir(), "--allow-leader", "abc"},
			[]string{`--allow-leader: "abc" is not a leader token's SHA-256`, "hint: copy the line 'fedcast study new --helper' printed"}},
		{"a --max-epsilon of 0", []string{"--key", key, "--state", t.TempDir(), "--max-epsilon", "0"},
			[]string{`--max-epsilon "0" is not a budget`, "hint: write a number above 0, such as 10, or 'inf'"}},
		{"a --max-epsilon that is not a number", []string{"--key", key, "--state", t.TempDir(), "--max-epsilon", "ten"},
			[]string{`--max-epsilon "ten" is not a budget`}},
		{"the address is taken", []string{"--key", key, "--state", t.TempDir(), "--addr", busy.Addr().String()},
			[]string{"address already in use", "another 'fedcast helper serve'"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A cancelled context: a helper that starts by mistake stops at once.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out, errb strings.Builder
			env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
			code, errs := run(ctx, env, append([]string{"helper", "serve"}, c.args...)), errb.String()
			if code == 0 {
				t.Fatalf("exit 0; want an error with %q", c.words)
			}
			if strings.Contains(errs, "helper: helper:") || strings.Contains(errs, "fedcast helper: helper:") {
				t.Errorf("package prefix in %q", errs)
			}
			for _, w := range c.words {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
		})
	}
}

// On start (after a restart above all) the helper says which studies it
// holds a ledger for and how far each is, and that requests are logged;
// each request then leaves a line on stderr.
func TestHelperServeSaysWhatItHolds(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if code, _, errs := fedcast(t, "helper", "keygen", "--out", keys); code != 0 {
		t.Fatal(errs)
	}
	key, err := loadHelperKey(filepath.Join(keys, "helper.key"))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "helper.state")
	h, err := helper.New(key, state, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Protocol: protocol.Version, Clients: 2, SampleRate: 1, NoiseMultiplier: 2, Params: 3,
		Helper: &protocol.Helper{URL: "http://h", PublicKey: key.PublicKey().Bytes(), LeaderTokenSHA256: study.HashToken(leaderToken),
			LeaderOperator: "Gesundheitsamt Nord"},
		Settings: protocol.Settings{Name: "Nord 2026", Epsilon: 10, Delta: 1e-5, Rounds: 4, ExpectedClients: 2,
			ClipNorm: 0.5, LocalEpochs: 1, LearningRate: 0.001}}
	hash, _ := st.Hash()
	var reps []secagg.Sealed
	for i := range 2 {
		r, err := secagg.NewReport(key.PublicKey(), hash, 1, uint32(i), []int64{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	if _, err := h.Aggregate(&protocol.HelperRequest{Study: st, LeaderToken: leaderToken, Round: 1, Reports: reps}); err != nil {
		t.Fatal(err)
	}
	h.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve, print, stop
	var out, errb strings.Builder
	env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	if code := run(ctx, env, []string{"helper", "serve", "--key", filepath.Join(keys, "helper.key"), "--state", state, "--addr", "127.0.0.1:0"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"helper key fingerprint: " + key.PublicKey().Fingerprint(), "1 study ledger(s) in " + state,
		hex.EncodeToString(hash[:]) + ` "Nord 2026", coordinator Gesundheitsamt Nord: 1 of 4 rounds served`, "each request is logged"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, out.String())
		}
	}
	if !strings.Contains(errb.String(), `msg="helper stopped"`) {
		t.Errorf("stderr lacks the stop line: %q", errb.String())
	}
}
