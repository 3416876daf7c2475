package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file with a run of unreported days gets words for whoever reads it:
// the whole-file commands (backtest, simulate, data public) say how to
// keep their period away from the days and that a backtest reads them as
// days without cases; an LHA's commands tell it to export the days or to
// tell its coordinator.
func TestFileWarningsForTheReader(t *testing.T) {
	var b strings.Builder
	b.WriteString("date,county_id,cases\n")
	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 90 {
		n := 12
		if i >= 50 && i < 70 {
			n = 0 // 20 days of zeros after 12 a day
		}
		fmt.Fprintf(&b, "%s,01001,%d\n", start.AddDate(0, 0, i).Format(time.DateOnly), n)
	}
	path := filepath.Join(t.TempDir(), "cases.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	env := &Env{Stdout: &strings.Builder{}, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	d, err := readCases(env, path, false, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	whole := errb.String()
	for _, want := range []string{"every count is 0", "A backtest reads them as days without cases", "--from and --to of fedcast simulate"} {
		if !strings.Contains(whole, want) {
			t.Errorf("whole-file words %q lack %q", whole, want)
		}
	}
	if strings.Contains(whole, "tell your coordinator") {
		t.Errorf("whole-file words speak to an LHA: %q", whole)
	}
	var lha strings.Builder
	printWarnings(&lha, d, time.Time{}, time.Time{})
	if !strings.Contains(lha.String(), "tell your coordinator") || strings.Contains(lha.String(), "A backtest") {
		t.Errorf("an LHA's words %q: want it to tell its coordinator, and no backtest", lha.String())
	}
	if len(d.DayNoticesIn(start.AddDate(0, 0, 80), time.Time{})) != 0 {
		t.Error("a period after the zeros still gets their notice")
	}
}

// An error reaches the reader without the Go package names it passed
// through, whichever package it came from.
func TestForPeople(t *testing.T) {
	for in, want := range map[string]string{
		"backtest: the cases file ends on 2022-12-31":                    "the cases file ends on 2022-12-31",
		"plan: --lhas 0: want at least 1":                                "--lhas 0: want at least 1",
		"secagg: the key file is empty":                                  "the key file is empty",
		"strategy \"cyclic\" cannot use a helper: it hands the model on": "strategy \"cyclic\" cannot use a helper: it hands the model on",
		"series: cases.csv line 4: field \"date\": empty":                "cases.csv line 4: field \"date\": empty",
		"publish: ε 0 (want > 0)":                                        "ε 0 (want > 0)",
		// A file name ending in a package's name keeps it.
		"writing out/run.json: json: unsupported value: NaN": "writing out/run.json: unsupported value: NaN",
		"reading my.plan: open my.plan: no such file":        "reading my.plan: open my.plan: no such file",
		"study: (fl: bad size)":                              "(bad size)",
		"session: protocol: frame too short":                 "frame too short",
		// A package's name as a word of a sentence stays.
		"ledger does not match the study: it belongs to another": "ledger does not match the study: it belongs to another",
		"reading the plan: plan: --lhas 0":                       "reading the plan: --lhas 0",
	} {
		if got := forPeople(in); got != want {
			t.Errorf("forPeople(%q) = %q, want %q", in, got, want)
		}
	}
}
