package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateStrategyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "ditto"}, "strategy"},
		{[]string{"--strategy", "cyclic", "--privacy", "both"}, "--example-epsilon"},
		{[]string{"--strategy", "cyclic", "--lambda", "1"}, "--strategy mrmtl"},
		{[]string{"--privacy", "node"}, "privacy"},
		{[]string{"--lambda", "1"}, "--strategy mrmtl"},
		{[]string{"--strategy", "mrmtl", "--lambda", "-1"}, "λ"},
		{[]string{"--privacy", "both"}, "--example-epsilon"},
		{[]string{"--privacy", "example", "--example-epsilon", "2"}, "--privacy both"},
		{[]string{"--example-rate", "0.5"}, "--privacy example"},
		{[]string{"--privacy", "example", "--example-rate", "1.5"}, "--example-rate"},
		{[]string{"--privacy", "example", "--example-clip", "0"}, "--example-clip"},
		{[]string{"--privacy", "both", "--example-epsilon", "1,2"}, "one ε"},
	} {
		code, _, errs := fedcast(t, append([]string{"simulate"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("simulate %v: exit %d, %q; want a usage error naming %q", c.args, code, errs, c.want)
		}
	}
}

func TestSimulateExampleLevelJSON(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "8", "--days", "50", "--seed", "5", "--out", cases); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	jsonPath := filepath.Join(dir, "out.json")
	code, out, errs := fedcast(t, "simulate", "--cases", cases, "--epsilon", "4", "--runs", "1", "--rounds", "2", "--local-epochs", "3",
		"--strategy", "mrmtl", "--lambda", "inf", "--privacy", "both", "--example-epsilon", "5", "--example-rate", "0.25",
		"--json", jsonPath, "--quiet")
	if code != 0 {
		t.Fatalf("simulate exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "privacy both") {
		t.Errorf("table:\n%s", out)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Results []struct {
			Guarantee string          `json:"guarantee"`
			Epsilon   json.RawMessage `json:"epsilon"`
			Lambda    json.RawMessage `json:"lambda"`
			Example   struct {
				Epsilon    float64 `json:"epsilon"`
				SampleRate float64 `json:"sample_rate"`
				SpentMax   float64 `json:"spent_per_lha_max"`
			} `json:"example"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Guarantee != "both" || string(r.Epsilon) != "4" || string(r.Lambda) != `"inf"` || r.Example.Epsilon != 5 ||
		r.Example.SampleRate != 0.25 || !(r.Example.SpentMax > 0 && r.Example.SpentMax <= 5) {
		t.Errorf("result %+v", r)
	}
}

// simulate --strategy cyclic runs with local DP-SGD: under --privacy example
// the grid's ε is each LHA's example-level ε and the hand-offs carry no
// noise (client ε "inf"); under --privacy both the hand-offs are noised for
// the client-level ε at q = 1 and every LHA also runs local DP-SGD.
func TestSimulateCyclicExampleLevel(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "6", "--days", "50", "--seed", "5", "--out", cases); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	for _, c := range []struct {
		args             []string
		guarantee, eps   string
		exEps            float64
		noiseMultiplier0 bool
	}{
		{[]string{"--privacy", "example", "--epsilon", "2"}, "example", `"inf"`, 2, true},
		{[]string{"--privacy", "both", "--epsilon", "4", "--example-epsilon", "3"}, "both", "4", 3, false},
	} {
		jsonPath := filepath.Join(dir, c.guarantee+".json")
		args := append([]string{"simulate", "--cases", cases, "--runs", "1", "--rounds", "2", "--local-epochs", "3",
			"--strategy", "cyclic", "--json", jsonPath, "--quiet"}, c.args...)
		if code, _, errs := fedcast(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		b, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Config struct {
				Strategy     string  `json:"strategy"`
				SamplingRate float64 `json:"sampling_rate"`
			} `json:"config"`
			Results []struct {
				Guarantee       string          `json:"guarantee"`
				Strategy        string          `json:"strategy"`
				Epsilon         json.RawMessage `json:"epsilon"`
				NoiseMultiplier float64         `json:"noise_multiplier"`
				Example         struct {
					Epsilon  float64 `json:"epsilon"`
					Steps    int     `json:"steps"`
					SpentMax float64 `json:"spent_per_lha_max"`
					LHAs     int     `json:"lhas"`
				} `json:"example"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		if rep.Config.Strategy != "cyclic" || rep.Config.SamplingRate != 1 || r.Strategy != "cyclic" || r.Guarantee != c.guarantee ||
			string(r.Epsilon) != c.eps || (r.NoiseMultiplier == 0) != c.noiseMultiplier0 {
			t.Errorf("%v: config %+v result %+v", c.args, rep.Config, r)
		}
		if r.Example.Epsilon != c.exEps || r.Example.Steps != 6 || r.Example.LHAs != 6 ||
			!(r.Example.SpentMax > 0.5*c.exEps && r.Example.SpentMax <= c.exEps) {
			t.Errorf("%v: example-level result %+v (want ε %v over 2·3 steps, spent within it)", c.args, r.Example, c.exEps)
		}
	}
}
