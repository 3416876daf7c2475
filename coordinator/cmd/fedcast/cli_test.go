package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// fedcast runs the CLI in process and returns its exit status and output.
func fedcast(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	code = run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestPrivacyEpsilonJSON(t *testing.T) {
	code, out, errs := fedcast(t, "privacy", "epsilon", "--sampling-rate", "0.25", "--noise-multiplier", "4.8828125", "--rounds", "75", "--delta", "1e-5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	for _, k := range []string{"epsilon", "delta", "order", "sampling_rate", "noise_multiplier", "rounds"} {
		if _, ok := v[k]; !ok {
			t.Errorf("missing %q in %s", k, out)
		}
	}
	// The proven bound (integer orders): 1.990715 at order 10.
	if e := v["epsilon"].(float64); e < 1.9906 || e > 1.9908 || v["order"].(float64) != 10 {
		t.Errorf("ε = %v at order %v, want in [1.9906, 1.9908] at order 10 (paper setting, integer orders)", e, v["order"])
	}
	if v["rounds"].(float64) != 75 || v["noise_multiplier"].(float64) != 4.8828125 {
		t.Errorf("echoed parameters wrong: %s", out)
	}
}

func TestPrivacyNoiseJSON(t *testing.T) {
	code, out, errs := fedcast(t, "privacy", "noise", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.25", "--rounds", "75", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Epsilon         float64 `json:"epsilon"`
		NoiseMultiplier float64 `json:"noise_multiplier"`
		TargetEpsilon   float64 `json:"target_epsilon"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || !strings.Contains(out, `"target_epsilon"`) {
		t.Fatalf("%s: %v", out, err)
	}
	if v.Epsilon > 1 || v.Epsilon < 0.999 || v.TargetEpsilon != 1 {
		t.Errorf("achieved ε %v for target %v: must be ≤ target and close to it", v.Epsilon, v.TargetEpsilon)
	}
	// The paper's coarser search gives c ≈ 8.98; a finer one may be slightly smaller.
	if v.NoiseMultiplier < 8.8 || v.NoiseMultiplier > 8.99 {
		t.Errorf("c = %v, want ≈ 8.9", v.NoiseMultiplier)
	}
}

func TestPrivacyText(t *testing.T) {
	code, out, _ := fedcast(t, "privacy", "epsilon", "--sampling-rate", "0.25", "--noise-multiplier", "8.984375", "--rounds", "75")
	if code != 0 || !strings.Contains(out, "ε = 0.99") {
		t.Errorf("exit %d: %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"nonsense"}, "unknown command"},
		{[]string{"privacy", "epsilon", "--sampling-rate", "1.5", "--noise-multiplier", "1", "--rounds", "3"}, "sampl"},
		{[]string{"privacy", "epsilon", "--noise-multiplier", "1", "--rounds", "3"}, "sampl"},
		{[]string{"privacy", "noise", "--epsilon", "-1", "--sampling-rate", "0.1", "--rounds", "3"}, "psilon"},
		{[]string{"privacy", "what"}, "unknown calculation"},
		{[]string{"simulate", "--epsilon", "abc"}, "not a positive number"},
		{[]string{"simulate", "--split", "sideways"}, "split"},
		{[]string{"simulate", "--from", "01/11/2020"}, "not a date"},
		{[]string{"simulate", "--runs", "0"}, "--runs"},
		{[]string{"simulate", "--history", "0"}, "--history"},
		{[]string{"simulate", "--cases", "/nonexistent/cases.csv"}, "/nonexistent/cases.csv"},
		{[]string{"data", "check"}, "exactly one file"},
	}
	for _, c := range cases {
		code, _, errs := fedcast(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero and %q", c.args, code, errs, c.want)
		}
	}
}

func TestSimulateSmallJSON(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.csv")
	pops := filepath.Join(dir, "pops.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "12", "--days", "60", "--seed", "4", "--out", cases, "--populations", pops); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	if code, out, errs := fedcast(t, "data", "check", cases); code != 0 || !strings.Contains(out, "12 areas") {
		t.Fatalf("data check: %s %s", out, errs)
	}
	jsonPath := filepath.Join(dir, "out.json")
	code, out, errs := fedcast(t, "simulate", "--cases", cases, "--counties", pops, "--epsilon", "3,inf", "--runs", "2",
		"--rounds", "3", "--clients-per-round", "6", "--local-epochs", "2", "--split", "random", "--seed", "9", "--eval-every", "1", "--json", jsonPath, "--quiet",
		"--hub", filepath.Join(dir, "hub"))
	if code != 0 {
		t.Fatalf("simulate exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "MAPE") || !strings.Contains(out, "inf") || !strings.Contains(out, "relative WIS") {
		t.Errorf("table:\n%s", out)
	}
	for _, e := range []string{"3", "inf"} {
		if b, err := os.ReadFile(filepath.Join(dir, "hub", "fedcast-eps-"+e+".csv")); err != nil || !strings.HasPrefix(string(b), "reference_date,target,horizon,target_end_date,location,output_type,output_type_id,value\n") {
			t.Errorf("simulate --hub: ε=%s: %v\n%.200s", e, err, b)
		}
	}
	if code, _, errs := fedcast(t, "simulate", "--point-forecast", "oracle"); code == 0 || !strings.Contains(errs, "persistence") {
		t.Errorf("unknown --point-forecast: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Config struct {
			Seed  uint64 `json:"seed"`
			Split string `json:"split"`
			Runs  int    `json:"runs"`
		} `json:"config"`
		Results []struct {
			Epsilon         any     `json:"epsilon"`
			NoiseMultiplier float64 `json:"noise_multiplier"`
			Runs            int     `json:"runs"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	figs := filepath.Join(dir, "figs")
	code, md, errs := fedcast(t, "report", "--figures", figs, jsonPath)
	if code != 0 || !strings.Contains(md, "| inf | – | – |") {
		t.Errorf("report: exit %d %s\n%s", code, errs, md)
	}
	for _, f := range []string{"privacy_utility_mae.png", "convergence.svg"} {
		if st, err := os.Stat(filepath.Join(figs, "out", f)); err != nil || st.Size() < 1000 {
			t.Errorf("report --figures: %s: %v", f, err)
		}
	}
	if v.Config.Seed != 9 || v.Config.Split != "random" || v.Config.Runs != 2 || len(v.Results) != 2 ||
		v.Results[0].Epsilon != 3.0 || v.Results[1].Epsilon != "inf" || v.Results[1].NoiseMultiplier != 0 || v.Results[0].NoiseMultiplier <= 0 {
		t.Errorf("JSON: %s", b)
	}
}

// TestAuditJSON: `fedcast audit --json` prints exactly the contract's
// fields in order, and --noise-scale is labelled as testing only on stderr
// and in the JSON.
func TestAuditJSON(t *testing.T) {
	code, out, errs := fedcast(t, "audit", "--epsilon", "2", "--clients", "400", "--canaries", "100", "--rounds", "10", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	keys := []string{"epsilon", "delta", "noise_multiplier", "noise_scale", "epsilon_lower", "confidence", "canaries", "method"}
	dec := json.NewDecoder(strings.NewReader(out))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", out)
	}
	for i := 0; dec.More(); i++ {
		tok, err := dec.Token()
		if err != nil || i >= len(keys) || tok != keys[i] {
			t.Fatalf("key %d is %v (%v), want the keys %v in order: %s", i, tok, err, keys, out)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	var v map[string]any
	json.Unmarshal([]byte(out), &v)
	if len(v) != len(keys) || v["confidence"] != 0.95 || v["canaries"] != 100.0 || v["noise_scale"] != 1.0 || v["epsilon"].(float64) > 2 {
		t.Errorf("audit JSON: %s", out)
	}
	if strings.Contains(errs, "WARNING") {
		t.Errorf("honest audit warned: %s", errs)
	}
	code, out, errs = fedcast(t, "audit", "--epsilon", "2", "--clients", "400", "--canaries", "100", "--rounds", "10", "--seed", "3", "--noise-scale", "0.5", "--json")
	if code != 0 || !strings.Contains(errs, "WARNING: --noise-scale 0.5 is for testing only") || !strings.Contains(out, `"method":"TESTING ONLY`) {
		t.Errorf("--noise-scale not labelled: exit %d, stderr %q, stdout %s", code, errs, out)
	}
	if code, _, errs := fedcast(t, "audit", "--epsilon", "2", "--delta", "0.5", "--clients", "10"); code != 2 || !strings.Contains(errs, "must be below 1/N = 0.1") || strings.Contains(errs, "audit: audit:") {
		t.Errorf("--delta 0.5 --clients 10: exit %d, %q; want refused: δ < 1/N", code, errs)
	}
	if code, _, errs := fedcast(t, "audit", "--json"); code != 2 || !strings.Contains(errs, "--epsilon is required") {
		t.Errorf("missing --epsilon: exit %d, %s", code, errs)
	}
	if code, _, errs := fedcast(t, "audit", "--epsilon", "2", "--canaries", "30000"); code != 2 || !strings.Contains(errs, "canaries") {
		t.Errorf("K > N: exit %d, %s", code, errs)
	}
}

func TestSimulatePresets(t *testing.T) {
	if code, _, errs := fedcast(t, "simulate", "--preset", "fast"); code != 2 || !strings.Contains(errs, "preset") {
		t.Errorf("unknown preset: exit %d, %q", code, errs)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, table, errs := fedcast(t, "simulate", "--epsilon", "1,inf", "--runs", "2", "--quiet", "--json", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(table, "persistence") || !strings.Contains(table, "rel. MAE") || !strings.Contains(table, "preset default") {
		t.Errorf("table lacks the baseline or the design:\n%s", table)
	}
	b, _ := os.ReadFile(out)
	var v struct {
		Config struct {
			Preset          string  `json:"preset"`
			Features        string  `json:"features"`
			Rounds          int     `json:"rounds"`
			ClientsPerRound int     `json:"clients_per_round"`
			Areas           int     `json:"areas"`
			LearningRate    float64 `json:"learning_rate"`
			Damping         float64 `json:"damping"`
			Model           []int   `json:"model"`
			Accountant      string  `json:"accountant"`
		} `json:"config"`
		Baseline *struct{ Name string } `json:"baseline"`
		Results  []struct {
			RelativeMAE *struct{ Mean, SD float64 } `json:"relative_mae"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	c := v.Config
	if c.Preset != "default" || c.Features != "log-change" || c.Rounds != 5 || c.ClientsPerRound != c.Areas || c.LearningRate != 0.001 || c.Damping != 0.5 ||
		len(c.Model) != 3 || c.Model[0] != 13 || c.Model[1] != 16 || c.Accountant != "rdp" {
		t.Errorf("default design not applied: %+v", c)
	}
	if v.Baseline == nil || v.Baseline.Name != "persistence" || len(v.Results) != 2 || v.Results[0].RelativeMAE == nil {
		t.Errorf("JSON lacks the baseline or relative MAE: %s", b)
	}
}

func TestStudyNewPresets(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		preset string
		extra  []string
		want   []string
	}{
		{"default", nil, []string{`"history": 13`, `"features": "log-change"`, `"rounds": 5`, `"expected_clients": 3`, `"learning_rate": 0.001`, `"damping": 0.5`}},
		{"paper", nil, []string{`"history": 10`, `"features": "counts"`, `"rounds": 75`, `"expected_clients": 3`, `"learning_rate": 0.001`, "128"}},
		{"default", []string{"--history", "11"}, []string{`"history": 11`, `"features": "log-change"`}},
	} {
		out := filepath.Join(dir, fmt.Sprintf("%s-%d.json", tc.preset, len(tc.extra)))
		args := append([]string{"study", "new", "--lhas", "3", "--epsilon", "1", "--preset", tc.preset, "--out", out}, tc.extra...)
		code, _, errs := fedcast(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.preset, code, errs)
		}
		b, _ := os.ReadFile(out)
		for _, w := range tc.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: study file lacks %s:\n%s", tc.preset, w, b)
			}
		}
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "1", "--rounds", "-2", "--out", filepath.Join(dir, "x.json")); code != 2 || !strings.Contains(errs, "--rounds") {
		t.Errorf("negative rounds: exit %d %q", code, errs)
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "3", "--epsilon", "1", "--history", "0", "--out", filepath.Join(dir, "y.json")); code != 2 || !strings.Contains(errs, "--history") {
		t.Errorf("history 0: exit %d %q", code, errs)
	}
}

func TestDataSynthScenarios(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "5", "--seed", "3", "--out", a); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "5", "--seed", "3", "--intervention-day", "31", "--intervention-effect", "0.29", "--out", b); code != 0 {
		t.Fatal(errs)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if len(ab) == 0 || bytes.Equal(ab, bb) {
		t.Error("an earlier, weaker intervention left the data unchanged")
	}
	if code, _, errs := fedcast(t, "data", "synth", "--r0", "-1"); code != 2 || !strings.Contains(errs, "--r0") {
		t.Errorf("negative R0: exit %d %q", code, errs)
	}
}

// TestCoordinatorWords: the client prints the coordinator's errors in the
// page's words, with the round, never "coordinator error 13
// (round_abandoned)" or a Go package prefix.
func TestCoordinatorWords(t *testing.T) {
	for _, tc := range []struct {
		e    protocol.Error
		want string
	}{
		{protocol.Error{Code: protocol.CodeRoundAbandoned, Round: 3,
			Message: "Round 3 was abandoned: the second server (the helper) did not answer. Nothing was released and no privacy budget was spent; the next round starts on schedule."},
			"coordinator: Round 3 was abandoned: the second server (the helper) did not answer. Nothing was released and no privacy budget was spent; the next round starts on schedule."},
		{protocol.Error{Code: protocol.CodeStaleRound, Round: 4, Message: "study: stale round: update for round 4"},
			"coordinator, round 4: it arrived after the round had closed (this computer took longer than the round allows), so the round went on without it"},
		{protocol.Error{Code: protocol.CodeBadUpdate, Round: 2, Message: "study: round 2: update refused: NaN"},
			"coordinator, round 2: the coordinator could not accept the changes as sent (round 2: update refused: NaN); tell your study coordinator"},
		{protocol.Error{Code: protocol.CodeInternal, Message: ""}, "coordinator: the coordinator failed on its own side; nothing is wrong with this computer"},
		{protocol.Error{Code: protocol.CodeHelloExpected}, "coordinator: hello expected"},
	} {
		got := coordinatorWords(&tc.e)
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.e.Code, got, tc.want)
		}
		if strings.Contains(got, "coordinator error") || strings.Contains(got, "study: ") {
			t.Errorf("%s: protocol words in %q", tc.e.Code, got)
		}
	}
}

// study new warns, once, for a lifetime budget above ε = 10, and not at
// 10 or below; the warning says what the number means.
func TestStudyNewWeakEpsilon(t *testing.T) {
	for _, tc := range []struct {
		eps  string
		warn bool
	}{{"2", false}, {"10", false}, {"12", true}, {"1000", true}} {
		out := filepath.Join(t.TempDir(), "study.json")
		code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "40", "--epsilon", tc.eps, "--out", out)
		if code != 0 {
			t.Fatalf("ε %s: exit %d: %s", tc.eps, code, stderr)
		}
		want := 0
		if tc.warn {
			want = 1
		}
		if got := strings.Count(stdout, "warning: ε = "+tc.eps+" is a weak promise"); got != want {
			t.Errorf("ε %s: %d weak-promise warnings, want %d:\n%s", tc.eps, got, want, stdout)
		}
		if tc.warn && !strings.Contains(stdout, "can set a lower limit of their own") {
			t.Errorf("ε %s: the warning does not say what the LHAs can do:\n%s", tc.eps, stdout)
		}
	}
}
