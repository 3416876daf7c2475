package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// --accountant pld: ε from the PLD accountant (dp_accounting reference
// 6.1602 for q = 0.1, c = 1, T = 75, δ = 1e-5), every RDP field kept, and
// the accountant named; the default stays rdp.
func TestPrivacyAccountantFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		kind string
		eps  float64
		tol  float64
	}{
		{[]string{"privacy", "epsilon", "--sampling-rate", "0.1", "--noise-multiplier", "1", "--rounds", "75", "--accountant", "pld", "--json"}, "pld", 6.1602, 0.002},
		{[]string{"privacy", "epsilon", "--sampling-rate", "0.25", "--noise-multiplier", "4.8828125", "--rounds", "75", "--json"}, "rdp", 1.990715, 1e-6}, // proven integer orders (argued 1.990551)
		{[]string{"privacy", "noise", "--epsilon", "2", "--sampling-rate", "0.25", "--rounds", "75", "--accountant", "pld", "--json"}, "pld", 2, 1e-4},
	} {
		code, out, errs := fedcast(t, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		for _, k := range []string{"accountant", "epsilon", "delta", "order", "sampling_rate", "noise_multiplier", "rounds"} {
			if _, ok := v[k]; !ok {
				t.Errorf("missing %q in %s", k, out)
			}
		}
		if v["accountant"] != tc.kind || math.Abs(v["epsilon"].(float64)-tc.eps) > tc.tol {
			t.Errorf("%v: %s; want accountant %s, ε ≈ %g", tc.args, out, tc.kind, tc.eps)
		}
		_, hasErr := v["discretisation_error"]
		if hasErr != (tc.kind == "pld") {
			t.Errorf("%v: discretisation_error present = %v", tc.args, hasErr)
		}
		if tc.args[1] == "noise" {
			if c := v["noise_multiplier"].(float64); c < 4.49 || c > 4.52 || v["epsilon"].(float64) > 2 {
				t.Errorf("PLD noise for ε = 2: %s, want c ≈ 4.51 and ε ≤ 2", out)
			}
		}
	}
	code, _, errs := fedcast(t, "privacy", "epsilon", "--sampling-rate", "0.1", "--noise-multiplier", "1", "--rounds", "3", "--accountant", "prv")
	if code == 0 || !strings.Contains(errs, "accountant") {
		t.Errorf("unknown accountant: exit %d, %q", code, errs)
	}
}

// study new --accountant pld writes the field and calibrates with PLD.
func TestStudyNewAccountant(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"rdp", "pld"} {
		out := filepath.Join(dir, kind+".json")
		code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "8", "--epsilon", "2", "--rounds", "20", "--expected", "4", "--accountant", kind, "--out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"accountant": "`+kind+`"`) || !strings.Contains(stdout, kind+" accountant") {
			t.Errorf("%s: file or output lacks the accountant: %s", kind, stdout)
		}
		var c float64
		if _, err := fmt.Sscanf(stdout[strings.Index(stdout, "c=")+2:], "%g", &c); err != nil {
			t.Fatal(err)
		}
		want, _ := privacy.NoiseMultiplierFor(privacy.AccountantKind(kind), 2, 1e-5, 0.5, 20)
		if math.Abs(c-want) > 1e-4 {
			t.Errorf("%s: c=%g, want %.4f", kind, c, want)
		}
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "8", "--epsilon", "2", "--rounds", "20", "--expected", "4", "--accountant", "x", "--out", filepath.Join(dir, "x.json")); code == 0 || !strings.Contains(errs, "accountant") {
		t.Errorf("bad accountant: exit %d, %q", code, errs)
	}
}

// simulate --accountant pld calibrates with PLD (less noise than RDP at
// the same ε), records the accountant in the JSON and runs to the end
// under the PLD budget gate.
func TestSimulateAccountant(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "12", "--days", "60", "--seed", "4", "--out", cases); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	type result struct {
		Config struct {
			Accountant string `json:"accountant"`
		} `json:"config"`
		Results []struct {
			NoiseMultiplier float64 `json:"noise_multiplier"`
			EpsilonSpent    any     `json:"epsilon_spent"`
		} `json:"results"`
	}
	got := map[string]result{}
	for _, kind := range []string{"rdp", "pld"} {
		jsonPath := filepath.Join(dir, kind+".json")
		code, _, errs := fedcast(t, "simulate", "--cases", cases, "--epsilon", "3", "--runs", "1", "--rounds", "4",
			"--clients-per-round", "6", "--local-epochs", "1", "--accountant", kind, "--json", jsonPath, "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", kind, code, errs)
		}
		var v result
		if err := json.Unmarshal(mustReadAcct(os.ReadFile(jsonPath)), &v); err != nil {
			t.Fatal(err)
		}
		if v.Config.Accountant != kind || len(v.Results) != 1 {
			t.Fatalf("%s: config accountant %q, %d results", kind, v.Config.Accountant, len(v.Results))
		}
		if s, ok := v.Results[0].EpsilonSpent.(float64); !ok || s > 3 {
			t.Errorf("%s: ε spent %v", kind, v.Results[0].EpsilonSpent)
		}
		got[kind] = v
	}
	if !(got["pld"].Results[0].NoiseMultiplier < got["rdp"].Results[0].NoiseMultiplier) {
		t.Errorf("PLD noise %g not below RDP noise %g", got["pld"].Results[0].NoiseMultiplier, got["rdp"].Results[0].NoiseMultiplier)
	}
	if code, _, errs := fedcast(t, "simulate", "--accountant", "gdp"); code == 0 || !strings.Contains(errs, "accountant") {
		t.Errorf("bad accountant: exit %d, %q", code, errs)
	}
}

func mustReadAcct(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
