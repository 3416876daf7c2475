package series

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func parseFixture(t *testing.T, path string) (*Dataset, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(f, filepath.Base(path))
}

func TestParseGood(t *testing.T) {
	type reg struct {
		start string
		cases []float64
	}
	for _, tc := range []struct {
		file string
		want map[string]reg
	}{
		{"basic.csv", map[string]reg{
			"01001": {"2020-11-01", []float64{3, 0, 0, 5}}, // 11-03 missing → 0
			"01002": {"2020-11-01", []float64{10, 12, 7}},
		}},
		{"excel_semicolon.csv", map[string]reg{
			"Kiel": {"2020-11-01", []float64{4, 12, 0}},
		}},
		{"aliases.csv", map[string]reg{
			"01001": {"2022-03-01", []float64{6, 2}},
			"09162": {"2022-03-01", []float64{10}},
		}},
		{"noregion.csv", map[string]reg{
			"noregion": {"2020-12-30", []float64{8, 9, 0, 11}},
		}},
		{"tabs_slashes.tsv", map[string]reg{
			"A": {"2020-02-28", []float64{4, 0, 1}}, // 2020 is a leap year
			"B": {"2020-03-01", []float64{3, 2}},
		}},
		{"spaces.csv", map[string]reg{
			"A B": {"2020-11-01", []float64{3, 1}},
		}},
		{"blank_rows.csv", map[string]reg{
			"05315": {"2020-11-01", []float64{3, 4}},
		}},
		{"date_german.csv", map[string]reg{
			"01001": {"2020-11-01", []float64{3}},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := parseFixture(t, filepath.Join("testdata", "good", tc.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(d.Regions) != len(tc.want) {
				t.Fatalf("got %d regions %v, want %d", len(d.Regions), d.Names(), len(tc.want))
			}
			for i, r := range d.Regions {
				if i > 0 && d.Regions[i-1].Name >= r.Name {
					t.Errorf("regions not sorted: %v", d.Names())
				}
				w, ok := tc.want[r.Name]
				if !ok {
					t.Errorf("unexpected region %q", r.Name)
					continue
				}
				if !r.Start.Equal(day(w.start)) || r.Start.Location() != time.UTC {
					t.Errorf("%s: start %v, want %s UTC", r.Name, r.Start, w.start)
				}
				if !reflect.DeepEqual(r.Cases, w.cases) {
					t.Errorf("%s: cases %v, want %v", r.Name, r.Cases, w.cases)
				}
			}
			// Round trip.
			var buf bytes.Buffer
			if err := Write(&buf, d); err != nil {
				t.Fatalf("Write: %v", err)
			}
			d2, err := Parse(&buf, "roundtrip.csv")
			if err != nil {
				t.Fatalf("Parse(Write): %v", err)
			}
			if !equalDatasets(d, d2) {
				t.Errorf("Parse(Write(d)) != d")
			}
		})
	}
}

func equalDatasets(a, b *Dataset) bool {
	if len(a.Regions) != len(b.Regions) {
		return false
	}
	for i := range a.Regions {
		ra, rb := a.Regions[i], b.Regions[i]
		if ra.Name != rb.Name || !ra.Start.Equal(rb.Start) || !reflect.DeepEqual(ra.Cases, rb.Cases) {
			return false
		}
	}
	return true
}

func TestParseBad(t *testing.T) {
	for _, tc := range []struct {
		file         string
		err          error
		line, column int
		field        string
		hint         string // substring of the hint
	}{
		{"empty.csv", ErrEmpty, 0, 0, "", "no content"},
		{"header_only.csv", ErrEmpty, 1, 0, "", "no data rows"},
		{"no_header.csv", ErrMissingHeader, 1, 0, "", "looks like data"},
		{"no_cases_column.csv", ErrMissingHeader, 1, 0, "", "new_cases"},
		{"wide_areas.csv", ErrMissingHeader, 1, 0, "", `If the other 3 columns ("01001", "01002", …) are areas, the table has one column per area`},
		{"duplicate_column.csv", ErrDuplicateColumn, 1, 4, "cases", "twice"},
		{"field_count.csv", ErrFieldCount, 3, 0, "", "4 values"},
		{"date_dotted_nosuchday.csv", ErrBadDate, 3, 1, "Datum", "DD.MM.YYYY"},
		{"date_slash_mixed.csv", ErrBadDate, 3, 1, "date", "two different orders"},
		{"noarea_repeated.csv", ErrMissingHeader, 4, 0, "", "No column holds the area"},
		{"workbook.xlsx", ErrSpreadsheet, 0, 0, "", "CSV UTF-8"},
		{"workbook.xls", ErrSpreadsheet, 0, 0, "", "CSV UTF-8"},
		{"png-image.csv", ErrNotText, 0, 0, "", "file type CSV"},
		{"elf-program.csv", ErrNotText, 0, 0, "", "file type CSV"},
		{"workbook.xlsx", ErrNotText, 0, 0, "", "CSV UTF-8"},
		{"deaths_only.tsv", ErrMissingHeader, 1, 0, "", "were not taken"},
		{"date_us.csv", ErrBadDate, 2, 1, "date", "cannot be told apart"},
		{"date_feb30.csv", ErrBadDate, 3, 1, "date", "no such day"},
		{"date_time.csv", ErrBadDate, 2, 1, "date", "time of day"},
		{"date_empty.csv", ErrMissingValue, 2, 1, "date", "needs a date"},
		{"negative.csv", ErrNegative, 12, 3, "cases", "cannot be negative"},
		{"fraction.csv", ErrNotInteger, 2, 3, "cases", "whole numbers"},
		{"nan.csv", ErrNotFinite, 2, 3, "cases", "write 0"},
		{"inf.csv", ErrNotFinite, 2, 3, "cases", "write 0"},
		{"text.csv", ErrNotNumber, 2, 3, "cases", "whole numbers"},
		{"thousands.csv", ErrNotNumber, 2, 3, "cases", "thousands separators"},
		{"too_large.csv", ErrTooLarge, 2, 3, "cases", "typing error"},
		{"empty_count.csv", ErrMissingValue, 2, 3, "cases", "Write 0"},
		{"empty_region.csv", ErrMissingValue, 2, 2, "region", "name or code"},
		{"control_region.csv", ErrBadRegion, 2, 2, "region", "control characters"},
		{"duplicate.csv", ErrDuplicate, 5, 1, "date", "Lines 4 and 5"},
		{"duplicate_unsorted.csv", ErrDuplicate, 5, 1, "date", "Lines 3 and 5"},
		{"bare_quote.csv", ErrSyntax, 2, 0, "", "quote"},
		{"year_typo.csv", ErrSpan, 3, 1, "date", "year"},
		{"utf16.csv", ErrSyntax, 0, 0, "", "UTF-8"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := parseFixture(t, filepath.Join("testdata", "bad", tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded with %d regions, want %v", len(d.Regions), tc.err)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %q is not %v", err, tc.err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q is not a *ParseError", err)
			}
			if pe.File != tc.file || pe.Line != tc.line || pe.Column != tc.column || pe.Field != tc.field {
				t.Errorf("position %s:%d:%d (%s), want %s:%d:%d (%s)",
					pe.File, pe.Line, pe.Column, pe.Field, tc.file, tc.line, tc.column, tc.field)
			}
			if !strings.Contains(strings.ToLower(pe.Hint), strings.ToLower(tc.hint)) {
				t.Errorf("hint %q does not mention %q", pe.Hint, tc.hint)
			}
			if !strings.HasPrefix(err.Error(), tc.file) || !strings.Contains(err.Error(), "series: ") {
				t.Errorf("message %q does not start with the file name or lacks the package prefix", err)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	b, err := os.ReadFile("testdata/bad/negative.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(bytes.NewReader(b), "cases.csv")
	const want = `cases.csv:12:3 (cases): series: negative count "-4"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}

	_, err = Parse(strings.NewReader("date,region,cases\n2020-11-01,A,1\n2020-11-01,A,2\n"), "x.csv")
	const wantDup = `x.csv:3:1 (date): series: duplicate row: 2020-11-01 for region "A" also on line 2`
	if err == nil || err.Error() != wantDup {
		t.Errorf("got %v, want %s", err, wantDup)
	}
}

func TestParseMultilineQuotedLine(t *testing.T) {
	// A quoted cell spanning two lines moves the line count on.
	in := "date,note,region,cases\n2020-11-01,\"two\nlines\",A,1\n2020-11-02,,A,-1\n"
	_, err := Parse(strings.NewReader(in), "q.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || pe.Column != 4 || pe.Field != "cases" {
		t.Errorf("got %v, want an error at q.csv:4:4 (cases)", err)
	}
}

func TestParseNegativeZero(t *testing.T) {
	d, err := Parse(strings.NewReader("date,region,cases\n2020-11-01,A,-0\n2020-11-02,A,-0.0\n"), "z.csv")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "date,region,cases\n2020-11-01,A,0\n2020-11-02,A,0\n" {
		t.Errorf("Write gave %q", got)
	}
}

func TestWriteRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *Dataset
		err  error
	}{
		{"fraction", &Dataset{Regions: []*Region{{Name: "A", Start: day("2020-01-01"), Cases: []float64{1.5}}}}, ErrNotInteger},
		{"negative", &Dataset{Regions: []*Region{{Name: "A", Start: day("2020-01-01"), Cases: []float64{-1}}}}, ErrNegative},
		{"nan", &Dataset{Regions: []*Region{{Name: "A", Start: day("2020-01-01"), Cases: []float64{0, nan()}}}}, ErrNotFinite},
		{"duplicate", &Dataset{Regions: []*Region{{Name: "A", Start: day("2020-01-01")}, {Name: "A", Start: day("2020-01-01")}}}, ErrDuplicate},
		{"control", &Dataset{Regions: []*Region{{Name: "A\nB", Start: day("2020-01-01")}}}, ErrBadRegion},
	} {
		var buf bytes.Buffer
		err := Write(&buf, tc.d)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.err)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %q before failing", tc.name, buf.String())
		}
	}
}

func TestParsePopulations(t *testing.T) {
	for _, tc := range []struct {
		file         string
		want         map[string]float64
		err          error
		line, column int
	}{
		{file: "counties.csv", want: map[string]float64{"01001": 91113, "11000": 3677472}},
		{file: "aliases.csv", want: map[string]float64{"S001": 1200.5, "S002": 80000}},
		{file: "zero.csv", err: ErrNotPositive, line: 2, column: 2},
		{file: "negative.csv", err: ErrNegative, line: 2, column: 2},
		{file: "duplicate.csv", err: ErrDuplicate, line: 4, column: 1},
		{file: "thousands.csv", err: ErrNotNumber, line: 2, column: 2},
		{file: "no_population.csv", err: ErrMissingHeader, line: 1},
		{file: "empty_value.csv", err: ErrMissingValue, line: 2, column: 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "populations", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParsePopulations(f, tc.file)
			if tc.err == nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			var pe *ParseError
			if !errors.Is(err, tc.err) || !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError wrapping %v", err, tc.err)
			}
			if pe.Line != tc.line || pe.Column != tc.column || pe.Hint == "" {
				t.Errorf("at %d:%d with hint %q, want %d:%d and a hint", pe.Line, pe.Column, pe.Hint, tc.line, tc.column)
			}
		})
	}
}

func TestRegionAccessors(t *testing.T) {
	r := &Region{Name: "A", Start: day("2020-12-30"), Cases: []float64{1, 2, 3, 4}}
	if got := r.End(); !got.Equal(day("2021-01-02")) {
		t.Errorf("End = %v", got)
	}
	berlin := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		at   time.Time
		want float64
		ok   bool
	}{
		{day("2020-12-29"), 0, false},
		{day("2020-12-30"), 1, true},
		{time.Date(2021, 1, 1, 0, 30, 0, 0, berlin), 3, true}, // 2020-12-31T23:30Z, but 1 January in Berlin
		{day("2021-01-02"), 4, true},
		{day("2021-01-03"), 0, false},
	} {
		v, ok := r.At(tc.at)
		if v != tc.want || ok != tc.ok {
			t.Errorf("At(%v) = %v, %v; want %v, %v", tc.at, v, ok, tc.want, tc.ok)
		}
	}
	d := &Dataset{Regions: []*Region{
		{Name: "A", Start: day("2020-01-05"), Cases: []float64{1, 1}},
		{Name: "B", Start: day("2020-01-01"), Cases: []float64{1}},
		{Name: "C", Start: day("2019-01-01")}, // empty: ignored by Span
	}}
	first, last := d.Span()
	if !first.Equal(day("2020-01-01")) || !last.Equal(day("2020-01-06")) {
		t.Errorf("Span = %v, %v", first, last)
	}
	if d.Region("B") != d.Regions[1] || d.Region("D") != nil || d.Region("") != nil {
		t.Errorf("Region lookup wrong")
	}
}

func TestDaysFromCivil(t *testing.T) {
	for _, s := range []string{"0000-01-01", "0001-03-01", "1900-02-28", "1969-12-31", "1970-01-01", "2000-02-29", "2020-11-01", "2400-12-31", "9999-12-31"} {
		got, ok := parseDay(s)
		want := day(s).Unix() / 86400
		if s == "0000-01-01" || s == "0001-03-01" {
			want = floorDiv(day(s).Unix(), 86400)
		}
		if !ok || got != want {
			t.Errorf("parseDay(%s) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"2021-02-29", "1900-02-29", "2020-13-01", "2020-00-10", "2020-01-00", "2020-04-31", "2020-01-1", "2020-01/01", "20a0-01-01"} {
		if _, ok := parseDay(s); ok {
			t.Errorf("parseDay(%s) accepted", s)
		}
	}
}

// TestNotTextMessage: a PNG and an ELF program saved as .csv get "this is
// not a text (CSV) file; it looks like …" from their content, and a text
// file that merely starts like a signature is still read.
func TestNotTextMessage(t *testing.T) {
	for file, kind := range map[string]string{"png-image.csv": "a PNG image", "elf-program.csv": "a program (ELF executable)"} {
		_, err := parseFixture(t, filepath.Join("testdata", "bad", file))
		if want := "this is not a text (CSV) file; it looks like " + kind; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
	if _, err := ParseBytes([]byte("date,region,cases\n2020-11-01,x,1\n"), "ok.csv"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseBytes([]byte("MZ,date,cases\nA,2020-11-01,1\n"), "mz.csv"); errors.Is(err, ErrNotText) {
		t.Errorf("a CSV whose header starts with MZ: %v", err)
	}
	if _, err := ParseBytes([]byte("date,region,cases\n2020-11-01,x\x00,1\n"), "nul.csv"); !errors.Is(err, ErrNotText) {
		t.Errorf("NUL bytes: %v, want ErrNotText", err)
	}
}

// TestWideHint: the one-column-per-area explanation is added only beside
// a date column and two or more unnamed columns, never for a file that
// merely lacks its cases column.
func TestWideHint(t *testing.T) {
	for _, tc := range []struct {
		header []string
		found  []int // date, region, cases as newTable found them
		wide   bool
	}{
		{[]string{"date", "01001", "01002"}, []int{0, -1, -1}, true},
		{[]string{"Berlin", "Datum", "Hamburg", "Bremen"}, []int{1, -1, -1}, true},
		{[]string{"date", "region", "deaths"}, []int{0, 1, -1}, false},
		{[]string{"date", "01001"}, []int{0, -1, -1}, false},
		{[]string{"01001", "01002", "01003"}, []int{-1, -1, -1}, false},
	} {
		if got := wideHint(tc.header, tc.found, ','); (got != "") != tc.wide {
			t.Errorf("header %v: hint %q, want one: %v", tc.header, got, tc.wide)
		}
	}
}
