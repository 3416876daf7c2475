package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// backtestFiles writes a small synthetic cases file (area ids with leading
// zeros) and its counties file.
func backtestFiles(t *testing.T) (cases, counties string) {
	t.Helper()
	dir := t.TempDir()
	d, _, err := synth.Generate(synth.Options{Areas: 4, Start: time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC), Days: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var meta strings.Builder
	meta.WriteString("county_id,name,state,population\n")
	for i, r := range d.Regions {
		r.Name = fmt.Sprintf("0%d00%d", 1+i%2, i+1)
		fmt.Fprintf(&meta, "%s,Area %d,State %d,%d\n", r.Name, i, i%2, 10000*(i+1))
	}
	cases, counties = filepath.Join(dir, "cases.csv"), filepath.Join(dir, "counties.csv")
	f, err := os.Create(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := series.Write(f, d); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(counties, []byte(meta.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return cases, counties
}

// TestBacktestCommand runs the command end to end: the per-quarter table on
// stdout, progress on stderr, the JSON keys of the contract, one hub file
// per origin, the figure and the markdown table.
func TestBacktestCommand(t *testing.T) {
	cases, counties := backtestFiles(t)
	dir := t.TempDir()
	hub, js, out := filepath.Join(dir, "hub"), filepath.Join(dir, "bt.json"), filepath.Join(dir, "out")
	code, stdout, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-08-03",
		"--to", "2020-09-21", "--epsilon", "2", "--hub", hub, "--json", js, "--out", out, "--seed", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "| 2020Q3 |") || !strings.Contains(stderr, "backtest: origin 2020-09-21") {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(must2(os.ReadFile(js)), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"origins", "lhas", "campaigns", "epsilon_spent", "delta", "relative_wis", "relative_mae",
		"coverage_50", "coverage_95", "geomean_quarter_relative_wis", "worst_quarter", "quarters", "seconds"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if v["origins"].(float64) != 8 || v["lhas"].(float64) != 4 || v["campaigns"].(float64) != 2 || v["epsilon_spent"].(float64) > 2 {
		t.Errorf("origins %v lhas %v campaigns %v ε %v", v["origins"], v["lhas"], v["campaigns"], v["epsilon_spent"])
	}
	q := v["quarters"].([]any)[0].(map[string]any)
	for _, k := range []string{"quarter", "origins", "relative_wis", "relative_mae", "coverage_50", "coverage_95"} {
		if _, ok := q[k]; !ok {
			t.Errorf("quarter lacks %q", k)
		}
	}
	if w := v["worst_quarter"].(map[string]any); w["quarter"] != "2020Q3" || w["relative_wis"] == nil {
		t.Errorf("worst_quarter %v", w)
	}
	files, _ := filepath.Glob(filepath.Join(hub, "*.csv"))
	if len(files) != 8 {
		t.Errorf("%d hub files, want 8", len(files))
	}
	for _, f := range []string{"relative_wis.svg", "quarters.md"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) < 100 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
}

// TestBacktestLastWeekNotScored: the file ends on 2020-09-28, so the origin
// 2020-09-28 is forecast (its hub file written) but not scored, and
// stderr, the table and the JSON say so.
func TestBacktestLastWeekNotScored(t *testing.T) {
	cases, counties := backtestFiles(t)
	dir := t.TempDir()
	hub, js := filepath.Join(dir, "hub"), filepath.Join(dir, "bt.json")
	code, stdout, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-09-07",
		"--to", "2020-09-28", "--epsilon", "inf", "--hub", hub, "--json", js, "--seed", "4", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	note := "not scored: the origin 2020-09-28 (forecast, hub file written)"
	if !strings.Contains(stderr, "backtest: "+note) || !strings.Contains(stdout, "N"+note[1:]) || !strings.Contains(stdout, "(4, 3 scored)") {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(hub, "2020-09-28-fedcast-"+backtest.DefaultPreset()+".csv")); err != nil {
		t.Error(err)
	}
	var v struct {
		Origins         int      `json:"origins"`
		UnscoredOrigins []string `json:"unscored_origins"`
	}
	if err := json.Unmarshal(must2(os.ReadFile(js)), &v); err != nil || v.Origins != 4 || len(v.UnscoredOrigins) != 1 || v.UnscoredOrigins[0] != "2020-09-28" {
		t.Errorf("JSON %+v, %v", v, err)
	}
}

func must2(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestBacktestUsage: bad flags and files get errors that say what to fix.
func TestBacktestUsage(t *testing.T) {
	cases, counties := backtestFiles(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21"}, "--epsilon are required"},
		{[]string{"--cases", cases, "--counties", counties, "--from", "3.8.2020", "--to", "2020-09-21", "--epsilon", "1"}, "YYYY-MM-DD"},
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "-1"}, "above 0"},
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-05-03", "--to", "2020-09-21", "--epsilon", "1"}, "no history"},
		{[]string{"--cases", cases, "--counties", cases, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1"}, "population"},
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1", "--preset", "x"}, `fedcast backtest: --preset "x": use one of`}, // it said "fedcast backtest: backtest: --preset"
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1", "--first-rounds", "-2"}, "--first-rounds -2"},
		// --every 0 ran with the default 28 without a word.
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1", "--every", "0"}, "--every 0 days: want 1 … 3650"},
		// It said "campaign 1: invalid study file: delta is 0.5, …".
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1", "--delta", "0.5"},
			"--delta 0.5 is not below 1/N = 0.25 (N = 4 LHAs, one per area of the cases file)"},
		{[]string{"--cases", cases, "--counties", counties, "--from", "2020-08-03", "--to", "2020-10-05", "--epsilon", "1"},
			"the last origin that can be forecast is 2020-09-28, the last whose target week can be scored 2020-09-21"},
		// Files that could not be written are refused before the replay, not after it.
		{[]string{"--cases", "/nonexistent/cases.csv", "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1",
			"--json", filepath.Join(t.TempDir(), "no-such-folder", "bt.json")}, "no-such-folder does not exist"},
		{[]string{"--cases", "/nonexistent/cases.csv", "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1",
			"--json", t.TempDir()}, "is a folder"},
		{[]string{"--cases", "/nonexistent/cases.csv", "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1",
			"--hub", filepath.Join(cases, "hub")}, "--hub " + filepath.Join(cases, "hub") + ": the folder cannot be made"},
		{[]string{"--cases", "/nonexistent/cases.csv", "--counties", counties, "--from", "2020-08-03", "--to", "2020-09-21", "--epsilon", "1",
			"--out", filepath.Join(cases, "out")}, "--out " + filepath.Join(cases, "out") + ": the folder cannot be made"},
	} {
		code, _, stderr := fedcast(t, append([]string{"backtest"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q (want %q)", c.args, code, stderr, c.want)
		}
	}
}

// TestPlanWarns: at ε = 2 the planner warns with the words "no change" for
// 2 LHAs and not for 400; the JSON has the contract's keys only on stdout.
func TestPlanWarns(t *testing.T) {
	for _, c := range []struct {
		lhas string
		warn bool
	}{{"2", true}, {"400", false}} {
		code, out, stderr := fedcast(t, "plan", "--lhas", c.lhas, "--epsilon", "2", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var v struct {
			Parameters map[string]any `json:"parameters"`
			Expected   *float64       `json:"expected_relative_wis"`
			Range      []float64      `json:"expected_relative_wis_range"`
			Warnings   []string       `json:"warnings"`
			ByOutbreak []struct {
				Outbreak    string  `json:"outbreak"`
				RelativeWIS float64 `json:"relative_wis"`
			} `json:"by_outbreak"`
			ToBeat *struct {
				LHAs    int     `json:"lhas"`
				Epsilon float64 `json:"epsilon"`
				Months  int     `json:"months"`
			} `json:"to_beat_no_change"`
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil || v.Expected == nil || len(v.Range) != 2 || v.Warnings == nil || len(v.Parameters) == 0 {
			t.Fatalf("%s: %v", out, err)
		}
		if !(v.Range[0] <= *v.Expected && *v.Expected <= v.Range[1]) {
			t.Errorf("%s LHAs: expected %v outside its range %v", c.lhas, *v.Expected, v.Range)
		}
		real := 0
		for _, m := range v.ByOutbreak {
			if strings.HasPrefix(m.Outbreak, "public county history") {
				real++
			}
			if m.RelativeWIS < v.Range[0]-1e-9 || m.RelativeWIS > v.Range[1]+1e-9 {
				t.Errorf("%s LHAs: %s measured %v, outside the range %v", c.lhas, m.Outbreak, m.RelativeWIS, v.Range)
			}
		}
		if len(v.ByOutbreak) < 5 || real != 1 {
			t.Errorf("%s LHAs: by outbreak %+v: want the four synthetic outbreaks and the county history", c.lhas, v.ByOutbreak)
		}
		noChange := 0
		for _, w := range v.Warnings {
			if strings.Contains(w, "no change") {
				noChange++
			}
		}
		if (noChange == 1) != c.warn || noChange > 1 || (*v.Expected >= 1) != c.warn {
			t.Errorf("%s LHAs: expected %v, warnings %q", c.lhas, *v.Expected, v.Warnings)
		}
		// What would beat no change: for 2 LHAs at ε = 2 more LHAs (no
		// budget up to 100 does it), and nothing for 400.
		if c.warn && (v.ToBeat == nil || v.ToBeat.LHAs <= 2 || !strings.Contains(strings.Join(v.Warnings, " "), fmt.Sprintf("with %d LHAs or more", v.ToBeat.LHAs))) ||
			!c.warn && v.ToBeat != nil {
			t.Errorf("%s LHAs: to_beat_no_change %+v, warnings %q", c.lhas, v.ToBeat, v.Warnings)
		}
	}
	code, out, _ := fedcast(t, "plan", "--lhas", "2", "--epsilon", "2")
	if code != 0 || !strings.Contains(out, "warning: with 2 LHAs at ε = 2 the shared model is expected to be worse than no change") {
		t.Errorf("text output: %s", out)
	}
	if code, _, stderr := fedcast(t, "plan", "--lhas", "0", "--epsilon", "2"); code != 2 || !strings.Contains(stderr, "--lhas") {
		t.Errorf("--lhas 0: exit %d %s", code, stderr)
	}
}

// TestStudyNewPlan: study new prints the plan's expectation and warnings,
// and changes parameters only with --plan.
func TestStudyNewPlan(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--out", filepath.Join(dir, "a.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Planner: expected relative WIS") || !strings.Contains(out, "worse than no change") || !strings.Contains(out, "parameters unchanged") {
		t.Errorf("%s", out)
	}
	code, out, stderr = fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--plan", "--out", filepath.Join(dir, "b.json"))
	if code != 0 || !strings.Contains(out, "its parameters were used") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
}

// TestStudyNewPlanContinuing: in a continuing study --plan uses the
// planner's rounds per campaign (unless --rounds is given) and says that
// the campaigns stay the ones --campaigns and --every set, when the
// planner's schedule differs; it once said "its parameters were used"
// while the study ran a schedule the planner had not chosen.
func TestStudyNewPlanContinuing(t *testing.T) {
	dir := t.TempDir()
	pl, err := makePlan(40, 2, 1e-5, 12)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		rounds int
		words  string
	}{
		{[]string{"--campaigns", "13", "--every", "672h"}, 13 * pl.Parameters.Rounds, "not its campaigns: this study runs the 13 campaigns, one every 28 days, that --campaigns and --every set"},
		{[]string{"--campaigns", "13", "--every", "672h", "--rounds", "3"}, 39, "not its campaigns: this study runs the 13 campaigns, one every 28 days"},
		{[]string{"--campaigns", "7", "--every", "1344h"}, 7 * pl.Parameters.Rounds, "its parameters were used where no flag set them (--plan)"},
	} {
		out := filepath.Join(dir, strings.Join(c.args, "")+".json")
		args := append([]string{"study", "new", "--lhas", "40", "--epsilon", "2", "--plan", "--out", out}, c.args...)
		code, stdout, stderr := fedcast(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if !strings.Contains(stdout, c.words) {
			t.Errorf("%v: no %q in\n%s", c.args, c.words, stdout)
		}
		f, _, err := study.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if f.Rounds != c.rounds {
			t.Errorf("%v: %d rounds in the study file, want %d", c.args, f.Rounds, c.rounds)
		}
	}
	if pl.Parameters.Campaigns != 7 || pl.Parameters.EveryDays != 56 {
		t.Errorf("the planner's schedule for 40 LHAs at ε = 2 over 12 months is now %d campaigns every %d days: the cases above assume 7 every 56", pl.Parameters.Campaigns, pl.Parameters.EveryDays)
	}
}

// TestStudyNewOwnSchedule: study new reads the planner's table at the
// study's own schedule too. A continuing study of 40 LHAs at ε = 2 over 13
// campaigns spreads its budget over 65 rounds; read as one campaign (as
// the planner once did for every study) it looked better than no change.
func TestStudyNewOwnSchedule(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		lhas  string
		args  []string
		sched string
		warn  bool
	}{
		{"40", []string{"--campaigns", "13", "--every", "672h"}, "13 campaigns of 5 rounds, one every 28 days, 40 LHAs per round", true},
		{"40", []string{"--rounds", "100"}, "100 rounds, 40 LHAs per round", true},
		{"40", nil, "5 rounds, 40 LHAs per round", false},
		{"400", []string{"--campaigns", "13", "--every", "672h"}, "13 campaigns of 5 rounds, one every 28 days, 400 LHAs per round", false},
	} {
		args := append([]string{"study", "new", "--lhas", c.lhas, "--epsilon", "2", "--out", filepath.Join(dir, c.lhas+strings.Join(c.args, "")+".json")}, c.args...)
		code, out, stderr := fedcast(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if !strings.Contains(out, "This study's own schedule ("+c.sched) {
			t.Errorf("%v: no assessment of %q:\n%s", c.args, c.sched, out)
		}
		warn := strings.Contains(out, "warning: this study's own schedule: with "+c.lhas+" LHAs at ε = 2 the shared model is expected to be worse than no change")
		if warn != c.warn {
			t.Errorf("%v: warning %v, want %v:\n%s", c.args, warn, c.warn, out)
		}
	}
}

// The scalar-kernel note appears exactly when an amd64 binary trains on
// the scalar kernels, and names the fix.
func TestKernelNote(t *testing.T) {
	var b strings.Builder
	kernelNote(&b, "backtest")
	want := runtime.GOARCH == "amd64" && nn.Kernels() == "scalar"
	if got := strings.Contains(b.String(), "'make build'"); got != want {
		t.Errorf("kernels %s on %s: note %q (want one: %v)", nn.Kernels(), runtime.GOARCH, b.String(), want)
	}
	if want && !strings.HasPrefix(b.String(), "backtest: note: ") {
		t.Errorf("the note %q does not start with the command's name", b.String())
	}
}

// TestBacktestNoiseNote: a replay with noise that scores worse than no
// change says on stderr how much noise each LHA carried and how to tell
// noise from design (four LHAs at ε = 0.5 scored far above 1 without a
// word on why), and whether the planner's table blames the noise; a
// replay without noise says nothing of it.
func TestBacktestNoiseNote(t *testing.T) {
	cases, counties := backtestFiles(t)
	js := filepath.Join(t.TempDir(), "bt.json")
	code, _, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-08-03",
		"--to", "2020-09-21", "--epsilon", "0.5", "--seed", "4", "--quiet", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		RelativeWIS float64 `json:"relative_wis"`
	}
	if err := json.Unmarshal(must2(os.ReadFile(js)), &v); err != nil || v.RelativeWIS < 1 {
		t.Fatalf("relative WIS %v (%v): the case needs a replay worse than no change", v.RelativeWIS, err)
	}
	for _, want := range []string{"worse than no change", "The noise per LHA is", "over 4 LHAs a round", "the planner's table expects", "'--epsilon inf'"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q: want %q", stderr, want)
		}
	}
	code, _, stderr = fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-08-03",
		"--to", "2020-09-21", "--epsilon", "inf", "--seed", "4", "--quiet")
	if code != 0 || strings.Contains(stderr, "per LHA") {
		t.Errorf("ε = ∞: exit %d, stderr %q", code, stderr)
	}
}

// TestBacktestHelp: -h lists --quiet in the synopsis, as docs/backtest.md
// does, and says which preset is the default: it called the preset
// "default" "today's one-month design" beside (default "weekly").
func TestBacktestHelp(t *testing.T) {
	_, _, stderr := fedcast(t, "backtest", "-h")
	for _, want := range []string{"[--seed S] [--quiet]", "weekly, the default:", "default: the earlier one-month design"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("backtest -h: want %q in\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "today's one-month design") {
		t.Errorf("backtest -h still calls the preset default today's design:\n%s", stderr)
	}
}

// TestNoiseNoteBlames: the note blames the noise only where the planner's
// table says it costs: 30 LHAs at c = 9.61 (z = 0.32), not 400 at c = 4.81
// (z = 0.012), whose score above 1 is the design's.
func TestNoiseNoteBlames(t *testing.T) {
	for _, c := range []struct {
		n    int
		c    float64
		want string
	}{{30, 9.61, "the noise is the likely cause"}, {400, 4.81, "the noise is unlikely to be the cause"}} {
		var b strings.Builder
		sum := backtest.Summary{Design: backtest.DefaultPreset(), RelativeWIS: 1.2}
		noiseNote(&b, sum, backtest.Schedule{Clients: c.n, ExpectedClients: c.n, NoiseMultiplier: c.c, Epsilon: 2, Delta: 1e-5}, 28)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%d LHAs, c = %g: %q, want %q", c.n, c.c, b.String(), c.want)
		}
	}
}

// TestBacktestStaleHubFiles: a --hub folder holding CSV files this run did
// not write (a longer span's other origins) gets a note on stderr; a
// scorer reading the folder would mix the runs. A fresh folder gets none.
func TestBacktestStaleHubFiles(t *testing.T) {
	cases, counties := backtestFiles(t)
	hub := filepath.Join(t.TempDir(), "hub")
	args := []string{"backtest", "--cases", cases, "--counties", counties, "--from", "2020-09-14", "--to", "2020-09-21",
		"--epsilon", "inf", "--seed", "4", "--quiet", "--hub", hub}
	code, _, stderr := fedcast(t, args...)
	if code != 0 || strings.Contains(stderr, "also holds") {
		t.Fatalf("fresh folder: exit %d, %q", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(hub, "2020-08-03-fedcast-weekly.csv"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = fedcast(t, args...)
	if want := hub + " also holds 1 other CSV file this run did not write (first: 2020-08-03-fedcast-weekly.csv)"; code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, %q: want %q", code, stderr, want)
	}
}

// TestBacktestJSONToStdout: --json - puts the JSON alone on stdout, so it
// pipes into another tool, and the table moves to stderr; no file "-" is made.
func TestBacktestJSONToStdout(t *testing.T) {
	cases, counties := backtestFiles(t)
	t.Chdir(t.TempDir())
	code, stdout, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-09-07",
		"--to", "2020-09-21", "--epsilon", "inf", "--json", "-", "--seed", "4", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		Origins     int     `json:"origins"`
		RelativeWIS float64 `json:"relative_wis"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || v.Origins != 3 || v.RelativeWIS <= 0 {
		t.Errorf("stdout is not the JSON alone: %v %+v\n%q", err, v, stdout)
	}
	if !strings.Contains(stderr, "| quarter") {
		t.Errorf("the table is not on stderr: %q", stderr)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
}

// TestBacktestBudgetBeyondTheLeastNoise: a budget far above what the
// smallest noise multiplier spends is said to buy nothing; a budget the
// replay spends gets no such note.
func TestBacktestBudgetBeyondTheLeastNoise(t *testing.T) {
	cases, counties := backtestFiles(t)
	for _, c := range []struct {
		eps  string
		note bool
	}{{"1e9", true}, {"2", false}} {
		code, _, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-09-07",
			"--to", "2020-09-21", "--epsilon", c.eps, "--seed", "4", "--quiet")
		if code != 0 {
			t.Fatalf("--epsilon %s: exit %d: %s", c.eps, code, stderr)
		}
		if got := strings.Contains(stderr, "is more than the least noise spends") && strings.Contains(stderr, "A larger budget changes nothing"); got != c.note {
			t.Errorf("--epsilon %s: note %v, want %v: %q", c.eps, got, c.note, stderr)
		}
	}
}
