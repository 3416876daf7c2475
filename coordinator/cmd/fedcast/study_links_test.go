package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
)

// TestStudyNewWindowAndLinks: study new prints the days every file must
// cover and the last usable --to, writes the links file (name,link, the
// admin link last, mode 0600) and says it is a secret; the links work as
// tokens; an existing links file is never overwritten.
func TestStudyNewWindowAndLinks(t *testing.T) {
	dir := t.TempDir()
	out, links := filepath.Join(dir, "s.json"), filepath.Join(dir, "links.csv")
	code, stdout, stderr := fedcast(t, "study", "new", "--names", "Kreis A,Kreis B", "--epsilon", "1", "--from", "2022-02-01", "--to", "2022-04-30",
		"--addr", "coord.example:9000", "--out", out, "--links", links)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"every LHA's file must cover 2022-01-29 … 2022-05-03, so files must reach 2022-05-03",
		"the last usable --to is 2022-04-27", "Wrote the join links and the admin link to " + links, "SECRET",
		// It said "the links are in that file", right after naming the study file.
		"The study file keeps only the tokens' SHA-256: the links themselves are in " + links + " and below, nowhere else.",
		// The start quorum was said nowhere.
		"Round 1 opens when both LHAs are ready (chose and checked a file and joined), however long that takes (--quorum sets how many); after a restart the rounds wait for as many again, at most 1m0s."} {
		if !strings.Contains(stdout, want) {
			t.Errorf("study new output lacks %q:\n%s", want, stdout)
		}
	}
	fi, err := os.Stat(links)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("links file: %v, mode %v; want 0600", err, fi.Mode())
	}
	fh, _ := os.Open(links)
	rows, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || len(rows) != 4 || strings.Join(rows[0], ",") != "name,link" || rows[1][0] != "Kreis A" || rows[3][0] != "admin" {
		t.Fatalf("links rows %q (%v)", rows, err)
	}
	f, _, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	tokens := study.NewTokens(f)
	for i, r := range rows[1:3] {
		tok := strings.TrimPrefix(r[1], "http://coord.example:9000/join#")
		if tokens.LHA(tok) != i || !strings.Contains(stdout, r[1]) {
			t.Errorf("row %q: not LHA %d's printed join link", r, i)
		}
	}
	if !tokens.Admin(strings.TrimPrefix(rows[3][1], "http://coord.example:9000/admin#")) {
		t.Errorf("last row %q is not the admin link", rows[3])
	}
	if f.LinksFile != links {
		t.Errorf("study file records links_file %q, want %q", f.LinksFile, links)
	}
	var b strings.Builder
	printLinksHint(&b, f, "http://x")
	if !strings.Contains(b.String(), "join and admin links: "+links) {
		t.Errorf("serve's links line: %q", b.String())
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "1", "--out", out+"2", "--links", links); code != 2 || !strings.Contains(errs, "never overwritten") {
		t.Errorf("existing links file: exit %d %s", code, errs)
	}
	if _, err := os.Stat(out + "2"); err == nil {
		t.Error("a study file was written although its links file could not be")
	}
}

// TestStudyNewLinksNotWritable: when the links file cannot be written (its
// folder does not exist), study new leaves no study file behind whose
// tokens nobody has, and says so; run again with a good --links, it works.
func TestStudyNewLinksNotWritable(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	code, stdout, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "1", "--out", out, "--links", filepath.Join(dir, "no-such-folder", "links.csv"))
	if code != 2 || !strings.Contains(errs, "nothing was written") || !strings.Contains(errs, "no-such-folder") {
		t.Errorf("exit %d, stderr %q; want 2, naming the folder and saying nothing was written", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the study file was left behind without its tokens (stdout %q)", stdout)
	}
	if code, _, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "1", "--out", out, "--links", filepath.Join(dir, "links.csv")); code != 0 {
		t.Errorf("again with a good --links: exit %d %s", code, errs)
	}
}

// TestClientRefusesNotText: client --data with a PNG or an ELF program
// (named .csv) says it is not a text file and what it looks like, with no
// Go package prefix, before connecting anywhere.
func TestClientRefusesNotText(t *testing.T) {
	for file, kind := range map[string]string{"png-image.csv": "a PNG image", "elf-program.csv": "a program (ELF executable)"} {
		code, _, errs := fedcast(t, "client", "--join", "http://127.0.0.1:1/join#T", "--data", seriesFixture("bad", file))
		if code != 1 || !strings.Contains(errs, "this is not a text (CSV) file; it looks like "+kind) || strings.Contains(errs, "series:") {
			t.Errorf("%s: exit %d, %q", file, code, errs)
		}
	}
}

func TestPrintMissed(t *testing.T) {
	for _, tc := range []struct {
		released int
		want     string
	}{{0, ""}, {1, "round 1 ran before this client connected"}, {2, "rounds 1 and 2 ran"}, {3, "rounds 1 to 3 ran"}, {5, "all 5 rounds ran"}} {
		var b strings.Builder
		printMissed(&b, tc.released, 5)
		if got := b.String(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%d released: %q, want %q", tc.released, got, tc.want)
		}
		// A client started again (after a top-up, a reboot) may have taken
		// part in those rounds: it must not say its data were not used.
		if got := b.String(); strings.Contains(got, "not used") || strings.Contains(got, "no privacy spent") {
			t.Errorf("%d released: %q claims the LHA's data were not used", tc.released, got)
		}
	}
}

// study new refuses a budget that is none and a study period that is
// not one, naming the flag; nothing is written.
func TestStudyNewBudgetAndPeriod(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lhas", "3", "--out", "s.json"}, "--epsilon is required"},
		{[]string{"--lhas", "3", "--epsilon", "0", "--out", "s.json"}, "--epsilon 0 is not a budget"},
		{[]string{"--lhas", "3", "--epsilon", "-1", "--out", "s.json"}, "--epsilon -1 is not a budget"},
		{[]string{"--lhas", "3", "--epsilon", "inf", "--out", "s.json"}, "--epsilon +Inf is not a budget"},
		{[]string{"--lhas", "3", "--epsilon", "NaN", "--out", "s.json"}, "--epsilon NaN is not a budget"},
		{[]string{"--lhas", "3", "--epsilon", "2", "--from", "2021-01-01", "--to", "2020-12-01", "--out", "s.json"}, "--from 2021-01-01 is after --to 2020-12-01"},
		{[]string{"--lhas", "3", "--epsilon", "2", "--from", "2021-13-01", "--out", "s.json"}, "--from \"2021-13-01\" is not a date"},
		{[]string{"--lhas", "3", "--epsilon", "2", "--to", "01.12.2020", "--out", "s.json"}, "--to \"01.12.2020\" is not a date"},
	} {
		dir := t.TempDir()
		args := append([]string{"study", "new"}, c.args...)
		args[len(args)-1] = filepath.Join(dir, "s.json")
		code, _, errs := fedcast(t, args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "invalid study file") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "s.json")); err == nil {
			t.Errorf("%v: a study file was written", c.args)
		}
	}
}

// --quorum outside 0…N names the flag and what it means (it said
// "invalid study file: start_quorum is 9, must be in [0, N=5]"); a valid
// one is said.
func TestStudyNewQuorum(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		quorum string
		code   int
		want   string
	}{
		{"9", 2, "fedcast study: --quorum 9: the study enrols 5 LHAs\nhint: --quorum is how many of the 5 LHAs must be ready before round 1 and after a restart: 1 to 5, or 0 for all"},
		{"-1", 2, "fedcast study: --quorum -1: the study enrols 5 LHAs"},
		{"3", 0, "Round 1 opens when 3 of the 5 LHAs are ready"},
		{"4", 0, "(Relative WIS: the forecasts' error, their ranges included, as a multiple of the no-change forecast's; below 1 beats no change; 10 or more: the shared model is noise.)"},
		{"0", 0, "Round 1 opens when all 5 LHAs are ready"},
	} {
		code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "5", "--epsilon", "2", "--quorum", tc.quorum, "--out", filepath.Join(dir, "q"+tc.quorum+".json"))
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("--quorum %s: exit %d, want %d and %q:\n%s%s", tc.quorum, code, tc.code, tc.want, stdout, stderr)
		}
	}
}
