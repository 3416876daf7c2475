package series

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func total(d *Dataset) float64 {
	s := 0.0
	for _, r := range d.Regions {
		for _, v := range r.Cases {
			s += v
		}
	}
	return s
}

func codes(ns []Notice) []string {
	var c []string
	for _, n := range ns {
		c = append(c, n.Code)
	}
	return c
}

// TestParseLayouts reads one fixture per real-world layout and encoding
// and checks the series, the columns taken and the notices given.
func TestParseLayouts(t *testing.T) {
	type reg struct {
		start string
		cases []float64 // nil: only the total and length are checked
		days  int
	}
	for _, tc := range []struct {
		file     string
		want     map[string]reg
		total    float64
		cols     Columns // Ignored is not compared
		notices  []string
		warnings []string // codes of the notices of level Warning
		msg      string   // substring of some notice's message
	}{
		{
			// Per-district TSV: Cases is the running total, Cases_New the
			// daily count; no area column.
			file:    "munich.tsv",
			want:    map[string]reg{"munich": {start: "2020-01-02", days: 70}},
			total:   14821, // the sum of Cases_New, equal to the last running total
			cols:    Columns{Date: "Date", Cases: "Cases_New", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices: []string{NoticeColumns, NoticeDailyColumn, NoticeIgnored},
			msg:     "the whole file is one area, called \u201cmunich\u201d",
		},
		{
			file: "running_total.csv",
			want: map[string]reg{
				"09162": {start: "2021-03-02", days: 34},
				"09184": {start: "2021-03-02", days: 34},
			},
			total:    (3602 - 60) + (1178 - 20 + 5), // differences; the fall of 5 counts 0
			cols:     Columns{Date: "date", Region: "region", Cases: "cases", CasesAre: CasesRunning, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices:  []string{NoticeColumns, NoticeRunningTotal, NoticeCorrection},
			warnings: []string{NoticeRunningTotal, NoticeCorrection},
			msg:      "largest fall is 5 cases on 2021-03-21",
		},
		{
			file:     "cumulative_named.csv",
			want:     map[string]reg{"06037": {start: "2020-04-02", cases: []float64{30, 0, 0, 25}}},
			total:    55,
			cols:     Columns{Date: "date", Region: "county_fips", Cases: "cumulative_cases", CasesAre: CasesRunning, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices:  []string{NoticeColumns, NoticeRunningTotal, NoticeCorrection},
			warnings: []string{NoticeRunningTotal, NoticeCorrection},
		},
		{
			file: "two_periods.csv",
			want: map[string]reg{
				"01001": {start: "2020-10-01", days: 143},
				"01002": {start: "2020-10-01", days: 143},
			},
			total:    -1,
			cols:     Columns{Date: "date", Region: "region", Cases: "cases", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices:  []string{NoticeColumns, NoticeMissingDays},
			warnings: []string{NoticeMissingDays},
			msg:      "No rows for 2020-10-21 to 2021-01-31 (103 days) in every area (2)",
		},
		{
			// Written with explicit zeros for days that were not reported.
			file: "zeros_written.csv",
			want: map[string]reg{
				"01001": {start: "2020-12-01", days: 60},
				"01002": {start: "2020-12-01", days: 60},
			},
			total:    -1,
			cols:     Columns{Date: "date", Region: "region", Cases: "cases", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices:  []string{NoticeColumns, NoticeZeroRun},
			warnings: []string{NoticeZeroRun},
			msg:      "From 2020-12-31 to 2021-01-19 (20 days) every count is 0 in area \u201c01001\u201d, after 22.1 cases a day on average",
		},
		{
			// Non-decreasing but small and sparse: daily counts, not a total.
			file:    "sparse_small.csv",
			want:    map[string]reg{"Kleinstadt": {start: "2020-06-01", days: 40}},
			total:   60,
			cols:    Columns{Date: "date", Region: "region", Cases: "cases", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices: []string{NoticeColumns},
		},
		{
			file: "german_cp1252.csv",
			want: map[string]reg{
				"Fürth":   {start: "2020-11-01", cases: []float64{3}},
				"München": {start: "2020-11-01", cases: []float64{12, 7}},
			},
			total:   22,
			cols:    Columns{Date: "Datum", Region: "Landkreis", Cases: "Fälle", CasesAre: CasesDaily, DateFormat: "DD.MM.YYYY", Encoding: "Windows-1252"},
			notices: []string{NoticeEncoding, NoticeColumns, NoticeDateFormat},
			msg:     "01.11.2020, is 1 November 2020",
		},
		{
			file: "german_faelle.csv",
			want: map[string]reg{
				"LK Fürth":   {start: "2020-11-01", cases: []float64{3, 4}},
				"SK München": {start: "2020-11-01", cases: []float64{12, 7}},
			},
			total:   26,
			cols:    Columns{Date: "Datum", Region: "Landkreis", Cases: "Faelle", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices: []string{NoticeColumns},
		},
		{
			file:    "bom_meldedatum.csv",
			want:    map[string]reg{"01001": {start: "2022-03-01", cases: []float64{6, 2}}},
			total:   8,
			cols:    Columns{Date: "Meldedatum", Region: "IdLandkreis", Cases: "Anzahl", CasesAre: CasesDaily, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices: []string{NoticeColumns},
		},
		{
			// RKI line list: rows per age group and sex are added up, rows
			// with NeuerFall = -1 left out.
			file: "rki_linelist.csv",
			want: map[string]reg{
				"01001": {start: "2020-11-01", cases: []float64{6, 1}},
				"01051": {start: "2020-11-02", cases: []float64{4}},
			},
			total:   11,
			cols:    Columns{Date: "Meldedatum", Region: "IdLandkreis", Cases: "AnzahlFall", CasesAre: CasesLineList, DateFormat: "YYYY-MM-DD", Encoding: "UTF-8"},
			notices: []string{NoticeColumns, NoticeIgnored, NoticeLineList},
			msg:     "its 5 rows were added up to 3 area-days. 1 row with NeuerFall = -1",
		},
		{
			file:    "slashed_dmy.csv",
			want:    map[string]reg{"Mitte": {start: "2020-11-12", cases: []float64{4, 5}}},
			total:   9,
			cols:    Columns{Date: "date", Region: "district", Cases: "cases", CasesAre: CasesDaily, DateFormat: "DD/MM/YYYY", Encoding: "UTF-8"},
			notices: []string{NoticeColumns, NoticeDateFormat},
			msg:     "13/11/2020 on line 3 can only be 13 November 2020",
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := parseFixture(t, filepath.Join("testdata", "good", tc.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(d.Regions) != len(tc.want) {
				t.Fatalf("regions %v, want %d", d.Names(), len(tc.want))
			}
			for _, r := range d.Regions {
				w, ok := tc.want[r.Name]
				if !ok {
					t.Fatalf("unexpected region %q", r.Name)
				}
				if !r.Start.Equal(day(w.start)) {
					t.Errorf("%s starts %v, want %s", r.Name, r.Start, w.start)
				}
				if w.cases != nil && !reflect.DeepEqual(r.Cases, w.cases) {
					t.Errorf("%s: cases %v, want %v", r.Name, r.Cases, w.cases)
				}
				if w.cases == nil && len(r.Cases) != w.days {
					t.Errorf("%s: %d days, want %d", r.Name, len(r.Cases), w.days)
				}
			}
			if got := total(d); tc.total >= 0 && got != tc.total {
				t.Errorf("total %v, want %v", got, tc.total)
			}
			cols := d.Columns
			cols.Ignored = nil
			if !reflect.DeepEqual(cols, tc.cols) {
				t.Errorf("columns %+v, want %+v", cols, tc.cols)
			}
			if got := codes(d.Notices); !slices.Equal(got, tc.notices) {
				t.Errorf("notices %v, want %v\n%v", got, tc.notices, d.Notices)
			}
			if got := codes(d.Warnings()); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings %v, want %v", got, tc.warnings)
			}
			found := tc.msg == ""
			for _, n := range d.Notices {
				if n.Message == "" || n.Level != Info && n.Level != Warning {
					t.Errorf("notice without message or level: %+v", n)
				}
				if n.Level == Warning && n.Hint == "" {
					t.Errorf("warning %s without a hint", n.Code)
				}
				found = found || strings.Contains(n.Message, tc.msg)
			}
			if !found {
				t.Errorf("no notice says %q:\n%v", tc.msg, d.Notices)
			}
		})
	}
}

// A running total given alone is converted, and says so; the same
// values as daily counts with a jagged weekly pattern are not.
func TestRunningTotalDetection(t *testing.T) {
	var cum, daily strings.Builder
	cum.WriteString("date,region,cases\n")
	daily.WriteString("date,region,cases\n")
	c := 0
	for i := 0; i < 60; i++ {
		v := 40 + i + []int{0, 25, 10, 5, 0, -30, -35}[i%7]
		c += v
		dd := day("2021-01-01").AddDate(0, 0, i).Format("2006-01-02")
		cum.WriteString(dd + ",A," + itoa(c) + "\n")
		daily.WriteString(dd + ",A," + itoa(v) + "\n")
	}
	dc, err := Parse(strings.NewReader(cum.String()), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	dd, err := Parse(strings.NewReader(daily.String()), "d.csv")
	if err != nil {
		t.Fatal(err)
	}
	if dc.Columns.CasesAre != CasesRunning || !slices.Contains(codes(dc.Warnings()), NoticeRunningTotal) {
		t.Errorf("running total not detected: %+v %v", dc.Columns, dc.Notices)
	}
	// The note on columns agrees with the warning.
	if n := dc.Notices[0]; n.Code != NoticeColumns || !strings.Contains(n.Message, "a running total") {
		t.Errorf("columns notice %q", n.Message)
	}
	if dd.Columns.CasesAre != CasesDaily || len(dd.Warnings()) != 0 {
		t.Errorf("daily counts taken for a running total: %+v %v", dd.Columns, dd.Notices)
	}
	// The converted series is the daily one without its first day.
	if !reflect.DeepEqual(dc.Regions[0].Cases, dd.Regions[0].Cases[1:]) {
		t.Errorf("differences %v\nwant %v", dc.Regions[0].Cases, dd.Regions[0].Cases[1:])
	}
	// Under an explicit "new cases" name it is not converted, but warned about.
	dn, err := Parse(strings.NewReader(strings.Replace(cum.String(), "cases", "new_cases", 1)), "n.csv")
	if err != nil {
		t.Fatal(err)
	}
	if dn.Columns.CasesAre != CasesDaily || !slices.Equal(codes(dn.Warnings()), []string{NoticeMaybeTotal}) {
		t.Errorf("new_cases column: %+v %v", dn.Columns, codes(dn.Notices))
	}
}

func itoa(n int) string { return fmtInt(n) }

// Never take deaths, weekly sums or rates for cases, whatever the column order.
func TestParseNeverTakesUnfitColumns(t *testing.T) {
	in := "Cases_Per_Million\tDeaths_New\tCases_Last_Week\tDate\tDeaths\tCases_New\n" +
		"900\t1\t70\t2020-11-01\t5\t12\n"
	d, err := Parse(strings.NewReader(in), "x.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if d.Columns.Cases != "Cases_New" || d.Regions[0].Cases[0] != 12 {
		t.Errorf("took %q = %v", d.Columns.Cases, d.Regions[0].Cases)
	}
	_, err = Parse(strings.NewReader("Date\tDeaths_New\tCases_Per_100k\n2020-11-01\t1\t3\n"), "y.tsv")
	var pe *ParseError
	if !errors.Is(err, ErrMissingHeader) || !errors.As(err, &pe) || !strings.Contains(pe.Hint, "\"Cases_Per_100k\"") {
		t.Errorf("got %v, want a missing-column error naming the unfit columns", err)
	}
}

func TestDecodeWindows1252(t *testing.T) {
	in := []byte("F\xe4lle \x80 \x93x\x94 \xdf")
	if got := string(decodeWindows1252(in)); got != "Fälle € “x” ß" {
		t.Errorf("got %q", got)
	}
}

func TestMissingDaysIn(t *testing.T) {
	d, err := parseFixture(t, filepath.Join("testdata", "good", "two_periods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, to string
		n        int
	}{
		{"2020-10-01", "2020-10-20", 0},
		{"2021-02-01", "2021-02-20", 0},
		{"2020-10-15", "2021-02-10", 1},
		{"2021-01-31", "2021-02-10", 1},
		{"", "2020-10-21", 1},
		{"2021-01-31", "", 1},
		{"", "", 1},
	} {
		var from, to time.Time
		if tc.from != "" {
			from = day(tc.from)
		}
		if tc.to != "" {
			to = day(tc.to)
		}
		if got := d.MissingDaysIn(from, to); len(got) != tc.n {
			t.Errorf("%s … %s: %d notices, want %d", tc.from, tc.to, len(got), tc.n)
		}
	}
}

// ParseBytes and Parse agree.
func TestParseBytes(t *testing.T) {
	b := []byte("Datum;Landkreis;F\xe4lle\n01.11.2020;M\xfcnchen;3\n")
	d1, err1 := ParseBytes(b, "a.csv")
	d2, err2 := Parse(bytes.NewReader(b), "a.csv")
	if err1 != nil || err2 != nil || !equalDatasets(d1, d2) || d1.Regions[0].Name != "München" {
		t.Errorf("%v %v", err1, err2)
	}
}

// A column named as new cases per day goes negative where its publisher
// corrected the running total downwards: such days count 0, with one
// warning naming the largest and its line. A plain or unnamed column
// still refuses a negative count.
func TestParseNegativeNewCases(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		cases    []float64 // nil: an error is expected
		msg      string
	}{
		{"per-district TSV", "Date\tCases\tCases_New\n2020-11-01\t10\t10\n2020-11-02\t8\t-2\n2020-11-03\t15\t7\n2020-11-04\t9\t-6\n",
			[]float64{10, 0, 7, 0}, "\u201cCases_New\u201d is negative on 2 days between 2020-11-02 and 2020-11-04 (corrections of earlier counts), in area \u201cx\u201d; the largest is \u22126 on 2020-11-04 in \u201cx\u201d (line 5)"},
		{"new_cases with areas", "date,region,new_cases\n2020-11-01,A,4\n2020-11-02,A,-1\n",
			[]float64{4, 0}, "is negative on 1 day, 2020-11-02"},
		{"plain cases column", "date,region,cases\n2020-11-01,A,4\n2020-11-02,A,-1\n", nil, ""},
		{"line list", "Meldedatum,IdLandkreis,AnzahlFall\n2020-11-01,A,4\n2020-11-02,A,-1\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(tc.in), "x.tsv")
			if tc.cases == nil {
				if !errors.Is(err, ErrNegative) {
					t.Fatalf("got %v, want ErrNegative", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Regions[0].Cases; !slices.Equal(got, tc.cases) {
				t.Errorf("cases %v, want %v", got, tc.cases)
			}
			var found bool
			for _, n := range d.Warnings() {
				if n.Code == NoticeCorrection && strings.Contains(n.Message, tc.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no correction warning containing %q in %+v", tc.msg, d.Notices)
			}
		})
	}
}
