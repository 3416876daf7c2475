package series

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxCount is the largest count accepted in one cell (10⁹ cases in one
// area on one day is a typing error, not an outbreak).
const MaxCount = 1e9

// MaxSpanDays is the longest range of dates one region may cover. Longer
// ranges are almost always a mistyped year (2202 for 2022), and the
// dense series would need memory for every day in between.
const MaxSpanDays = 36600

// regionBuilder collects one region's rows as they are read.
type regionBuilder struct {
	name     string
	days     []int64 // days since 1970-01-01, in file order
	vals     []float64
	lines    []int
	min, max int64
	seen     map[int64]int // day → index into days; built once rows arrive out of order
	sum      bool          // add up repeated days (line lists) instead of refusing them
	summed   int           // rows added to an earlier one
}

// Parse reads daily case counts from a CSV file in long format, one row
// per region and day:
//
//	date,region,cases
//	2020-11-01,01001,12
//
// file names the source in messages only. Column names are matched
// case-insensitively against the aliases listed in the package
// documentation (English and German); columns may come in any order and
// extra columns are ignored. A column of new cases per day (Cases_New,
// new_cases, AnzahlFall) is preferred to a plain or running-total one;
// deaths, weekly sums and rates are never taken. Without a region column
// the whole file is one region, named after file's base name without
// extension ("area" if file is empty); such a file must then have one
// row per day.
//
// The delimiter (',', ';' or tab) is detected from the header line; a
// UTF-8 byte-order mark, CRLF line ends, quoted cells and blank rows are
// accepted, and a file that is not valid UTF-8 is read as Windows-1252
// (older Excel "CSV"). Excel workbooks (.xlsx, .xls) are refused with a
// message on how to save them as CSV. With ';' as delimiter a decimal
// comma is accepted in counts ("12,0").
//
// Dates are YYYY-MM-DD (or YYYY/MM/DD), DD.MM.YYYY, or DD/MM/YYYY and
// MM/DD/YYYY when the file's dates tell which (a day above 12 somewhere).
// Counts must be finite non-negative whole numbers up to MaxCount ("12.0"
// is 12), except that a column named as new cases per day may hold
// negative corrections, read as 0 with a warning. Days missing between a region's first and last date are zero.
// Regions come back sorted by name.
//
// The result's Columns say which column was taken for what, and its
// Notices what Parse did or noticed: a running total turned into daily
// counts, an RKI-style line list added up, long runs of missing days,
// corrections. See Notice.
//
// Errors are *ParseError values wrapping one of the package's sentinels;
// Parse stops at the first problem.
func Parse(r io.Reader, file string) (*Dataset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &ParseError{File: file, Err: fmt.Errorf("series: read: %w", err), Hint: "The file could not be read."}
	}
	return ParseBytes(data, file)
}

// ParseBytes is Parse on a file already in memory; it does not keep data.
func ParseBytes(data []byte, file string) (*Dataset, error) {
	return ParseBytesVia(data, file, nil)
}

// ParseBytesVia is ParseBytes reading the rows through via(r) when via is
// not nil: the browser page wraps r in a reader that lets the page paint
// between reads while a large file is parsed. via must return a reader of
// the same bytes.
func ParseBytesVia(data []byte, file string, via func(io.Reader) io.Reader) (*Dataset, error) {
	if err := refuseSpreadsheet(data, file); err != nil {
		return nil, err
	}
	data, cols, notes := decodeText(data)
	optRegion := regionColumn
	optRegion.optional = true
	var src io.Reader = bytes.NewReader(data)
	if via != nil {
		src = via(src)
	}
	t, err := newTable(src, file, dateColumn, optRegion, casesColumn)
	if err != nil {
		return nil, err
	}
	r := newRowReader(t, data, file, cols)
	if err := r.readAll(); err != nil {
		return nil, err
	}
	return r.dataset(notes)
}

// decodeText returns data as UTF-8 (Windows-1252 when it is not valid
// UTF-8, with a notice saying so) and the columns' encoding and default
// date format.
func decodeText(data []byte) ([]byte, Columns, []Notice) {
	var notes []Notice
	cols := Columns{Encoding: "UTF-8", DateFormat: "YYYY-MM-DD"}
	if !hasUTF16BOM(data) && !utf8.Valid(data) {
		data = decodeWindows1252(data)
		cols.Encoding = "Windows-1252"
		notes = append(notes, Notice{Code: NoticeEncoding, Level: Info,
			Message: "The file is not UTF-8 text. It was read as Windows-1252, the encoding older versions of Excel use for CSV files.",
			Hint:    "Check that names with ä, ö, ü or ß look right. If they do not, save the file as \u201cCSV UTF-8\u201d and read it again."})
	}
	return data, cols, notes
}

type dupError int

func (dupError) Error() string { return "duplicate" }

func (b *regionBuilder) add(day int64, v float64, line int) error {
	lo, hi := min(b.min, day), max(b.max, day)
	if hi-lo+1 > MaxSpanDays {
		return fmt.Errorf("%w: more than %d days", ErrSpan, MaxSpanDays)
	}
	n := len(b.days)
	if b.seen == nil && (n == 0 || day > b.days[n-1]) {
		// Fast path: days arrive in increasing order, so no repeats.
	} else {
		if b.seen == nil {
			b.seen = make(map[int64]int, 2*n)
			for i, d := range b.days {
				b.seen[d] = i
			}
		}
		if i, ok := b.seen[day]; ok {
			if !b.sum {
				return dupError(b.lines[i])
			}
			if b.vals[i]+v > MaxCount {
				return ErrTooLarge
			}
			b.vals[i] += v
			b.summed++
			return nil
		}
		b.seen[day] = n
	}
	b.min, b.max = lo, hi
	b.days = append(b.days, day)
	b.vals = append(b.vals, v)
	b.lines = append(b.lines, line)
	return nil
}

// sort puts the rows in date order (they usually are already).
func (b *regionBuilder) sort() {
	if b.seen == nil {
		return // arrived in increasing order
	}
	idx := make([]int, len(b.days))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return b.days[idx[i]] < b.days[idx[j]] })
	days := make([]int64, len(idx))
	vals := make([]float64, len(idx))
	lines := make([]int, len(idx))
	for k, i := range idx {
		days[k], vals[k], lines[k] = b.days[i], b.vals[i], b.lines[i]
	}
	b.days, b.vals, b.lines, b.seen = days, vals, lines, nil
}

// region builds the dense series; b must be sorted and non-empty.
func (b *regionBuilder) region() *Region {
	lo, hi := b.days[0], b.days[len(b.days)-1]
	cases := make([]float64, hi-lo+1)
	for i, d := range b.days {
		cases[d-lo] = b.vals[i]
	}
	return &Region{Name: b.name, Start: dayTime(lo), Cases: cases}
}

func fileRegionName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	base = strings.TrimSpace(base)
	if base == "" || base == "." || base == string(filepath.Separator) || checkRegionName(base) != nil {
		return "area"
	}
	return base
}

func checkRegionName(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: not valid UTF-8", ErrBadRegion)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character %U", ErrBadRegion, r)
		}
	}
	return nil
}

// parseDay parses YYYY-MM-DD or YYYY/MM/DD into days since 1970-01-01.
func parseDay(s string) (int64, bool) {
	if len(s) != 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return 0, false
	}
	var n [8]int
	k := 0
	for i := 0; i < 10; i++ {
		if i == 4 || i == 7 {
			continue
		}
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n[k] = int(c - '0')
		k++
	}
	y := n[0]*1000 + n[1]*100 + n[2]*10 + n[3]
	m := n[4]*10 + n[5]
	d := n[6]*10 + n[7]
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to the
// proleptic Gregorian date y-m-d.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// dateHint explains how to fix an unreadable date.
func dateHint(s string) string {
	const want = "Write dates as year-month-day, YYYY-MM-DD, for example 2020-11-01."
	if len(s) > 10 && s[10] == ' ' || len(s) > 10 && s[10] == 'T' {
		if _, ok := parseDay(s[:10]); ok {
			return "Remove the time of day. " + want
		}
	}
	if _, ok := parseDayShape(s); ok {
		return "There is no such day in the calendar; check the month and the day. " + want
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '/' || r == '-' })
	if len(parts) == 3 && len(parts[2]) == 4 {
		if strings.Contains(s, ".") {
			return "This looks like day.month.year. " + want + " In a spreadsheet, set the column's date format to YYYY-MM-DD before saving."
		}
		return "This looks like day/month/year or month/day/year, which cannot be told apart. " + want +
			" In a spreadsheet, set the column's date format to YYYY-MM-DD before saving."
	}
	return want
}

// parseDayShape reports whether s has the shape of an ISO date, whether or
// not the day exists.
func parseDayShape(s string) (struct{}, bool) {
	if len(s) != 10 || (s[4] != '-' && s[4] != '/') || s[7] != s[4] {
		return struct{}{}, false
	}
	for i := 0; i < 10; i++ {
		if i != 4 && i != 7 && (s[i] < '0' || s[i] > '9') {
			return struct{}{}, false
		}
	}
	return struct{}{}, true
}

// parseCount parses one case count; on failure it returns a sentinel
// (possibly wrapped) and a hint.
func parseCount(s string, comma rune) (float64, error, string) {
	if s == "" {
		return 0, ErrMissingValue, "Write 0 for a day with no reported cases."
	}
	// Fast path: plain digits.
	if len(s) <= 15 {
		var v int64
		i := 0
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				break
			}
			v = v*10 + int64(c-'0')
		}
		if i == len(s) {
			if float64(v) > MaxCount {
				return 0, ErrTooLarge, tooLargeHint
			}
			return float64(v), nil, ""
		}
	}
	t := s
	if comma == ';' && strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && math.IsInf(v, 0) {
			if v < 0 {
				return 0, ErrNegative, negativeHint
			}
			return 0, ErrTooLarge, tooLargeHint
		}
		hint := "Counts must be whole numbers such as 0, 7 or 1250, without units or text."
		if strings.ContainsAny(s, ",.' ") {
			hint = "Counts must be whole numbers such as 1250: remove thousands separators (1,250 or 1.250)."
		}
		return 0, ErrNotNumber, hint
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, ErrNotFinite, "Counts must be numbers of cases; write 0 for a day with no reported cases."
	case v < 0:
		return 0, ErrNegative, negativeHint
	case v != math.Trunc(v):
		return 0, ErrNotInteger, "Counts must be whole numbers of cases (no fractions). If this column holds an average, use the raw daily counts instead."
	case v > MaxCount:
		return 0, ErrTooLarge, tooLargeHint
	}
	return v + 0, nil, "" // + 0 turns -0 into 0
}

const (
	negativeHint = "Case counts cannot be negative. If this row corrects an earlier over-count, " +
		"subtract it from the earlier day instead, or write 0."
	tooLargeHint = "This count is far larger than any real daily count; check it for a typing error."
)

// ReadFile parses the file at path (see Parse).
func ReadFile(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("series: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Write writes d in long format: a header "date,region,cases", then one
// row per region and day (regions in the order of d.Regions, days in
// order, zero days included). Parse(Write(d)) gives back d when d is
// sorted by name. Write fails, before writing anything, if a count is not
// a finite non-negative whole number up to MaxCount, a region name is
// empty or invalid, or two regions share a name.
func Write(w io.Writer, d *Dataset) error {
	seen := make(map[string]bool, len(d.Regions))
	for _, r := range d.Regions {
		if r.Name == "" || strings.TrimSpace(r.Name) != r.Name {
			return fmt.Errorf("series: write: region name %q is empty or has surrounding spaces", r.Name)
		}
		if err := checkRegionName(r.Name); err != nil {
			return fmt.Errorf("series: write region %q: %w", r.Name, err)
		}
		if seen[r.Name] {
			return fmt.Errorf("series: write: %w: region %q twice", ErrDuplicate, r.Name)
		}
		seen[r.Name] = true
		for i, v := range r.Cases {
			var err error
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				err = ErrNotFinite
			case v < 0:
				err = ErrNegative
			case v != math.Trunc(v):
				err = ErrNotInteger
			case v > MaxCount:
				err = ErrTooLarge
			}
			if err != nil {
				return fmt.Errorf("series: write region %q on %s: %w", r.Name, r.Date(i).Format(time.DateOnly), err)
			}
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"date", "region", "cases"}); err != nil {
		return err
	}
	rec := make([]string, 3)
	var buf []byte
	for _, r := range d.Regions {
		rec[1] = r.Name
		day := r.Start
		for _, v := range r.Cases {
			buf = day.AppendFormat(buf[:0], time.DateOnly)
			rec[0] = string(buf)
			rec[2] = strconv.FormatFloat(v, 'f', -1, 64)
			if err := cw.Write(rec); err != nil {
				return err
			}
			day = day.AddDate(0, 0, 1)
		}
	}
	cw.Flush()
	return cw.Error()
}

// ParsePopulations reads area metadata in the layout of counties.csv,
//
//	county_id,name,state,population
//	01001,Flensburg (Kreisfreie Stadt),Schleswig-Holstein,91113
//
// and returns population by region id. The id column may also be called
// region or id (and the other region aliases of Parse), the population
// column pop; other columns are ignored. Populations must be finite and
// positive; ids must be unique. Errors are *ParseError values as in Parse.
func ParsePopulations(r io.Reader, file string) (map[string]float64, error) {
	t, err := newTable(r, file, regionColumn, populationColumn)
	if err != nil {
		return nil, err
	}
	const kRegion, kPop = 0, 1
	pop := make(map[string]float64)
	lines := make(map[string]int)
	for {
		rec, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		id, _ := t.cell(rec, kRegion)
		if id == "" {
			return nil, t.errAt(kRegion, "", ErrMissingValue, "Every row needs the code of its region.")
		}
		if err := checkRegionName(id); err != nil {
			return nil, t.errAt(kRegion, id, err, "Region codes may not contain control characters and must be valid text (UTF-8).")
		}
		if first, ok := lines[id]; ok {
			return nil, t.errAt(kRegion, "",
				fmt.Errorf("%w: region %q also on line %d", ErrDuplicate, id, first),
				fmt.Sprintf("Each region may appear once. Lines %d and %d both describe %q: delete one.", first, t.line(kRegion), id))
		}
		ps, _ := t.cell(rec, kPop)
		v, perr, hint := parsePopulation(ps)
		if perr != nil {
			return nil, t.errAt(kPop, ps, perr, hint)
		}
		pop[strings.Clone(id)] = v
		lines[strings.Clone(id)] = t.line(kRegion)
	}
	if len(pop) == 0 {
		return nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("%w: a header but no rows", ErrEmpty),
			Hint: "The file names its columns but holds no rows. Add one row per region."}
	}
	return pop, nil
}

func parsePopulation(s string) (float64, error, string) {
	if s == "" {
		return 0, ErrMissingValue, "Every row needs the region's number of inhabitants."
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(v, 0) {
		hint := "Write the number of inhabitants as a plain number such as 91113."
		if strings.ContainsAny(s, ",.' ") {
			hint = "Write the number of inhabitants without thousands separators, for example 91113."
		}
		return 0, ErrNotNumber, hint
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, ErrNotFinite, "Write the number of inhabitants as a plain number such as 91113."
	case v < 0:
		return 0, ErrNegative, "A population cannot be negative."
	case v == 0:
		return 0, ErrNotPositive, "A population must be at least 1 inhabitant."
	}
	return v, nil, ""
}
