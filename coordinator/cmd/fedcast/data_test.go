package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// seriesFixture is a case file of the series package's tests.
func seriesFixture(dir, name string) string {
	return filepath.Join("..", "..", "..", "shared", "series", "testdata", dir, name)
}

func checkJSON(t *testing.T, args ...string) (int, checkReport, string) {
	t.Helper()
	code, out, errs := fedcast(t, append([]string{"data", "check"}, args...)...)
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("data check %v: not JSON (%v):\n%s\n%s", args, err, out, errs)
	}
	return code, rep, errs
}

// The per-district TSV layout (Date, Cases = running total, Deaths,
// Cases_New, …, no area column): data check reports the daily counts of
// Cases_New, not the running totals of Cases.
func TestDataCheckDistrictTSV(t *testing.T) {
	file := seriesFixture("good", "munich.tsv")
	code, rep, errs := checkJSON(t, file, "--json") // the flag after the file, as the issue writes it
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The sums of the Cases (running total) and Cases_New columns.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sumRunning, sumNew float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, "\t")
		var running, daily float64
		if err := json.Unmarshal([]byte(f[1]), &running); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(f[3]), &daily); err != nil {
			t.Fatal(err)
		}
		sumRunning += running
		sumNew += daily
	}
	if rep.TotalCases != sumNew || sumNew != 14821 || sumRunning == sumNew {
		t.Errorf("total_cases %v, want %v (the sum of Cases_New; the running totals add up to %v)", rep.TotalCases, sumNew, sumRunning)
	}
	if !rep.OK || rep.File != file || rep.Areas != 1 || rep.FirstDay != "2020-01-02" || rep.LastDay != "2020-03-11" || rep.Days != 70 {
		t.Errorf("report %+v", rep)
	}
	if rep.Columns.Date != "Date" || rep.Columns.Area != "" || rep.Columns.Cases != "Cases_New" || rep.Columns.CasesAre != "daily" {
		t.Errorf("columns %+v", rep.Columns)
	}
	if len(rep.Warnings) != 0 || len(rep.AreaList) != 1 || rep.AreaList[0].Name != "munich" {
		t.Errorf("warnings %+v, areas %+v", rep.Warnings, rep.AreaList)
	}
	var said bool
	for _, n := range rep.Notices {
		said = said || n.Code == series.NoticeDailyColumn && strings.Contains(n.Message, "\u201cCases\u201d not used")
	}
	if !said {
		t.Errorf("no notice says Cases was left out: %+v", rep.Notices)
	}

	// Human output: the same figures and the same words.
	code, out, _ := fedcast(t, "data", "check", file)
	if code != 0 || !strings.Contains(out, ": OK\n") || !strings.Contains(out, "14,821 cases in all") ||
		!strings.Contains(out, `"Cases_New"`) || !strings.Contains(out, "called \u201cmunich\u201d") {
		t.Errorf("data check:\n%s", out)
	}
}

func TestDataCheckLayouts(t *testing.T) {
	for _, tc := range []struct {
		file     string
		areas    int
		total    float64
		cases    string
		warnings []string
	}{
		{"german_faelle.csv", 2, 26, "Faelle", nil},
		{"german_cp1252.csv", 2, 22, "Fälle", nil},
		{"running_total.csv", 2, 4705, "cases", []string{series.NoticeRunningTotal, series.NoticeCorrection}},
		{"two_periods.csv", 2, -1, "cases", []string{series.NoticeMissingDays}},
		{"rki_linelist.csv", 2, 11, "AnzahlFall", nil},
	} {
		code, rep, errs := checkJSON(t, "--json", seriesFixture("good", tc.file))
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.file, code, errs)
			continue
		}
		var got []string
		for _, w := range rep.Warnings {
			got = append(got, w.Code)
			if w.Hint == "" || w.Message == "" || w.Level != "warning" {
				t.Errorf("%s: incomplete warning %+v", tc.file, w)
			}
		}
		if rep.Areas != tc.areas || tc.total >= 0 && rep.TotalCases != tc.total || rep.Columns.Cases != tc.cases ||
			strings.Join(got, ",") != strings.Join(tc.warnings, ",") {
			t.Errorf("%s: areas %d, total %v, cases %q, warnings %v; want %d, %v, %q, %v",
				tc.file, rep.Areas, rep.TotalCases, rep.Columns.Cases, got, tc.areas, tc.total, tc.cases, tc.warnings)
		}
	}
	// The text output of a file with warnings says so and gives the hints.
	code, out, _ := fedcast(t, "data", "check", seriesFixture("good", "two_periods.csv"))
	if code != 0 || !strings.Contains(out, "with 1 warning") || !strings.Contains(out, "warning: No rows for 2020-10-21 to 2021-01-31") ||
		!strings.Contains(out, "what to do: If there were cases on those days") {
		t.Errorf("data check:\n%s", out)
	}
}

func TestDataCheckProblems(t *testing.T) {
	for _, tc := range []struct {
		file, want, hint string
	}{
		{"noarea_repeated.csv", "no column holds the area", "No column holds the area"},
		{"workbook.xlsx", "this is not a text (CSV) file; it looks like an Excel workbook", "CSV UTF-8"},
		{"png-image.csv", "this is not a text (CSV) file; it looks like a PNG image", "file type CSV"},
		{"elf-program.csv", "this is not a text (CSV) file; it looks like a program (ELF executable)", "file type CSV"},
		{"negative.csv", "negative count", "cannot be negative"},
	} {
		path := seriesFixture("bad", tc.file)
		code, _, errs := fedcast(t, "data", "check", path)
		if code != 1 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "how to fix it: ") || !strings.Contains(errs, tc.hint) {
			t.Errorf("%s: exit %d, stderr %q", tc.file, code, errs)
		}
		code, rep, _ := checkJSON(t, "--json", path)
		if code != 1 || rep.OK || rep.Error == nil || !strings.Contains(rep.Error.Message, tc.want) || !strings.Contains(rep.Error.Hint, tc.hint) {
			t.Errorf("%s --json: exit %d, %+v", tc.file, code, rep.Error)
		}
	}
	if code, _, errs := fedcast(t, "data", "check", "a.csv", "b.csv"); code != 2 || !strings.Contains(errs, "exactly one file") {
		t.Errorf("two files: exit %d %s", code, errs)
	}
}

// printGuarded writes one line per area with the headline's method in
// words, the day forecast and the value, then the guard's sentence and the
// model's own forecast (a 1/H-weight network gives the input mean, 20; a
// 1000/H one an absurd 20,000, flagged and never headlined).
func TestPrintGuarded(t *testing.T) {
	st := protocol.Study{Layers: []int{10, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.8}}
	model := make([]float64, 11)
	for i := 0; i < 10; i++ {
		model[i] = 0.1
	}
	start := time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC)
	flat := make([]float64, 30)
	for i := range flat {
		flat[i] = 20
	}
	d := &series.Dataset{Regions: []*series.Region{{Name: "09162", Start: start, Cases: flat}}}
	var b bytes.Buffer
	gs, cov, err := guardedForecasts(st, d, model, nil)
	printGuarded(&b, st, gs, cov, err)
	out := b.String()
	for _, want := range []string{"  09162: 20.0 (no change) for 2020-12-04 (between ", "; input up to 2020-11-27)\n",
		forecast.TooFewWeeks, "shared model's own forecast: 20.0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed:\n%s\nlacks %q", out, want)
		}
	}
	for i := 0; i < 10; i++ {
		model[i] = 100
	}
	b.Reset()
	gs, cov, err = guardedForecasts(st, d, model, nil)
	printGuarded(&b, st, gs, cov, err)
	if out := b.String(); !strings.Contains(out, "09162: 20.0 (no change)") || !strings.Contains(out, "shared model's own forecast: 20000.0 (FLAGGED") {
		t.Errorf("absurd model printed:\n%s", out)
	}
	b.Reset()
	gs, cov, err = guardedForecasts(st, d, model[:3], nil)
	printGuarded(&b, st, gs, cov, err)
	if !strings.HasPrefix(b.String(), "no forecast: ") {
		t.Errorf("printed %q for a model of the wrong size", b.String())
	}
}
