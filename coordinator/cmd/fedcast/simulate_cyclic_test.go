package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimulateCyclicAndScheduleFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--strategy", "ring"}, "unknown strategy"},
		{[]string{"simulate", "--noise-schedule", "linear:0"}, "noise schedule"},
		{[]string{"simulate", "--noise-schedule", "cosine:2"}, "unknown rule"},
		{[]string{"simulate", "--noise-schedule", "1,2,3", "--rounds", "4", "--epsilon", "50"}, "3 multipliers for 4 rounds"},
	} {
		code, _, errs := fedcast(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want non-zero and %q", c.args, code, errs, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "out.json")
	code, _, errs := fedcast(t, "simulate", "--strategy", "cyclic", "--noise-schedule", "step:2,0.5", "--epsilon", "4", "--runs", "1",
		"--rounds", "3", "--local-epochs", "2", "--quiet", "--json", path)
	if code != 0 {
		t.Fatalf("simulate --strategy cyclic: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Config struct {
			Strategy      string  `json:"strategy"`
			NoiseSchedule string  `json:"noise_schedule"`
			SampleRate    float64 `json:"sampling_rate"`
		} `json:"config"`
		Results []struct {
			NoiseSchedule []float64 `json:"noise_schedule"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Config.Strategy != "cyclic" || rep.Config.NoiseSchedule != "step:2,0.5" || rep.Config.SampleRate != 1 ||
		len(rep.Results) != 1 || len(rep.Results[0].NoiseSchedule) != 3 {
		t.Errorf("report: %+v", rep)
	}
}

func TestStudyNewNoiseSchedule(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	code, out, errs := fedcast(t, "study", "new", "--lhas", "6", "--epsilon", "2", "--noise-schedule", "linear:0.5", "--out", path)
	if code != 0 || !strings.Contains(out, "Noise schedule linear:0.5: c_1 = ") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"noise_schedule": "linear:0.5"`) {
		t.Errorf("study file: %v\n%s", err, b)
	}
	code, _, errs = fedcast(t, "study", "new", "--lhas", "6", "--epsilon", "2", "--noise-schedule", "step:0,1", "--out", filepath.Join(dir, "x.json"))
	if code == 0 || !strings.Contains(errs, "noise_schedule") {
		t.Errorf("bad schedule: exit %d, %s", code, errs)
	}
}
