package series

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds what Parse does for files from the field: workbooks
// refused, Windows-1252 text, day-first dates, running totals, line
// lists, missing days and corrections.

// MinMissingRun is the shortest run of days missing from the file inside
// an area's range that Parse warns about. Shorter runs (a weekend or a
// holiday without reports) are common and count as zero quietly.
const MinMissingRun = 7

// MinRunningTotalDays is the shortest stretch of reported days on which
// Parse judges whether a column is a running total.
const MinRunningTotalDays = 28

// MinZeroRun is the shortest run of consecutive reported zeros, after an
// average of at least ZeroRunAfter cases a day over the four weeks
// before, that Parse warns about: counts that drop to zero and stay
// there usually mean the days were not reported.
const (
	MinZeroRun   = 14
	ZeroRunAfter = 5.0
)

// maxMissingNotices caps the missing-days notices of one file; the rest
// are summed up in one more notice.
const maxMissingNotices = 10

// refuseSpreadsheet returns an error for an Excel or OpenDocument
// workbook, which is not CSV text.
func refuseSpreadsheet(data []byte, file string) error {
	const how = "In Excel choose File \u203a Save As (or Save a Copy) and pick the file type " +
		"\u201cCSV UTF-8 (Comma delimited) (*.csv)\u201d; in LibreOffice choose File \u203a Save As, " +
		"file type \u201cText CSV (.csv)\u201d. Then choose the saved .csv file."
	ext := strings.ToLower(filepath.Ext(file))
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if ext == ".zip" || ext == ".gz" {
			return &ParseError{File: file, Err: fmt.Errorf("%w; it looks like a ZIP archive", ErrSpreadsheet),
				Hint: "This is a compressed archive. Unpack it first and choose the .csv file inside."}
		}
		return &ParseError{File: file, Err: fmt.Errorf("%w; it looks like an Excel workbook (.xlsx) or another ZIP file", ErrSpreadsheet),
			Hint: "This is a spreadsheet workbook, not a CSV file. " + how}
	case bytes.HasPrefix(data, []byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")):
		return &ParseError{File: file, Err: fmt.Errorf("%w; it looks like an Excel 97-2003 workbook (.xls)", ErrSpreadsheet),
			Hint: "This is an old-style Excel workbook, not a CSV file. " + how}
	case bytes.HasPrefix(data, []byte("\x1F\x8B")):
		return &ParseError{File: file, Err: fmt.Errorf("%w; it looks like a gzip archive", ErrSpreadsheet),
			Hint: "This is a compressed file. Unpack it first (for example with gunzip or 7-Zip) and choose the .csv file."}
	}
	if kind := binaryKind(data); kind != "" {
		return &ParseError{File: file, Err: fmt.Errorf("%w; it looks like %s", ErrNotText, kind),
			Hint: "Choose the CSV export of your daily case counts (a text file with the columns date, region and cases). " +
				"If you saved it from a spreadsheet, use Save As with the file type CSV."}
	}
	return nil
}

func hasUTF16BOM(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF)
}

// cp1252 maps the bytes 0x80–0x9F of Windows-1252 to Unicode; the other
// bytes above 0x7F are the Latin-1 code points. The five unassigned bytes
// map to the C1 controls of the same value.
var cp1252 = [32]rune{
	'€', 0x81, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0x8D, 'Ž', 0x8F,
	0x90, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0x9D, 'ž', 'Ÿ',
}

// decodeWindows1252 returns data decoded from Windows-1252 as UTF-8.
func decodeWindows1252(data []byte) []byte {
	n := 0
	for _, c := range data {
		if c >= 0x80 {
			n++
		}
	}
	out := make([]byte, 0, len(data)+2*n)
	for _, c := range data {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c < 0xA0:
			out = utf8.AppendRune(out, cp1252[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return out
}

// dateFormat is how a file writes its dates.
type dateFormat int

const (
	isoDates   dateFormat = iota // YYYY-MM-DD or YYYY/MM/DD
	dottedDMY                    // DD.MM.YYYY (German)
	slashedDMY                   // DD/MM/YYYY
	slashedMDY                   // MM/DD/YYYY
)

func (f dateFormat) String() string {
	switch f {
	case dottedDMY:
		return "DD.MM.YYYY"
	case slashedDMY:
		return "DD/MM/YYYY"
	case slashedMDY:
		return "MM/DD/YYYY"
	}
	return "YYYY-MM-DD"
}

// dateReader reads a file's dates in the format its first row sets.
type dateReader struct {
	format dateFormat
	first  string // first date as written
	proof  string // for slashed dates: the date that told the order apart
	line   int    // and its line
}

// splitDMY splits "d.m.yyyy" (sep '.') or "a/b/yyyy" into its numbers:
// one or two digits, one or two digits, four digits.
func splitDMY(s string, sep byte) (a, b, y int, ok bool) {
	parts := strings.Split(s, string(sep))
	if len(parts) != 3 || len(parts[2]) != 4 {
		return 0, 0, 0, false
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 4 || i < 2 && len(p) > 2 {
			return 0, 0, 0, false
		}
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return 0, 0, 0, false
			}
			n[i] = n[i]*10 + int(p[j]-'0')
		}
	}
	return n[0], n[1], n[2], true
}

func civil(y, m, d int) (int64, bool) {
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// detect sets the format from the first row's date s. For slashed dates
// with the year last it reads the whole date column first: a first
// number above 12 somewhere means day/month/year, a second one above 12
// month/day/year; if neither occurs the dates cannot be told apart.
func (dr *dateReader) detect(data []byte, s string, t *table, kDate int) error {
	dr.first = s
	if _, ok := parseDay(s); ok {
		return nil
	}
	if _, _, _, ok := splitDMY(s, '.'); ok {
		dr.format = dottedDMY
		return nil
	}
	if _, _, _, ok := splitDMY(s, '/'); !ok {
		return nil // not a date: the row's check reports it
	}
	// Scan the date column.
	t2, err := newTable(bytes.NewReader(data), t.file, dateColumn)
	if err != nil {
		return err
	}
	dayFirst, monthFirst := "", ""
	dayLine, monthLine := 0, 0
	for {
		rec, err := t2.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil // the main pass reports it, at its line
		}
		ds, _ := t2.cell(rec, 0)
		a, b, _, ok := splitDMY(ds, '/')
		if !ok {
			continue
		}
		if a > 12 && dayFirst == "" {
			dayFirst, dayLine = ds, t2.line(0)
		}
		if b > 12 && monthFirst == "" {
			monthFirst, monthLine = ds, t2.line(0)
		}
	}
	switch {
	case dayFirst != "" && monthFirst != "":
		return &ParseError{File: t.file, Line: monthLine, Column: t.col[kDate] + 1, Field: t.name[kDate], Value: monthFirst,
			Err: fmt.Errorf("%w: %s on line %d is day/month/year, this one month/day/year", ErrBadDate, dayFirst, dayLine),
			Hint: "The dates are written in two different orders. Write them as YYYY-MM-DD, for example 2020-11-01: " +
				"in a spreadsheet, set the column's date format to YYYY-MM-DD before saving."}
	case dayFirst != "":
		dr.format, dr.proof, dr.line = slashedDMY, dayFirst, dayLine
	case monthFirst != "":
		dr.format, dr.proof, dr.line = slashedMDY, monthFirst, monthLine
	}
	return nil // neither: parse fails on the first row with the "cannot be told apart" hint
}

// parse reads one date in the file's format.
func (dr *dateReader) parse(s string) (int64, bool) {
	switch dr.format {
	case dottedDMY:
		d, m, y, ok := splitDMY(s, '.')
		if !ok {
			return 0, false
		}
		return civil(y, m, d)
	case slashedDMY, slashedMDY:
		a, b, y, ok := splitDMY(s, '/')
		if !ok {
			return 0, false
		}
		if dr.format == slashedMDY {
			a, b = b, a
		}
		return civil(y, b, a)
	}
	return parseDay(s)
}

// hint explains how to fix an unreadable date s.
func (dr *dateReader) hint(s string) string {
	if dr.format == isoDates {
		return dateHint(s)
	}
	return fmt.Sprintf("The first date of the file, %s, is written %s, so every date must be. "+
		"Check this one for a typing error or a day that does not exist, or write all dates as YYYY-MM-DD (for example 2020-11-01).",
		dr.first, dr.format)
}

// notices says how dates other than YYYY-MM-DD were read.
func (dr *dateReader) notices() []Notice {
	var msg string
	switch dr.format {
	case dottedDMY:
		d, m, y, _ := splitDMY(dr.first, '.')
		msg = fmt.Sprintf("Dates were read as day.month.year, the German way: the first one, %s, is %s.", dr.first, longDate(y, m, d))
	case slashedDMY:
		a, b, y, _ := splitDMY(dr.proof, '/')
		msg = fmt.Sprintf("Dates were read as day/month/year: %s on line %d can only be %s.", dr.proof, dr.line, longDate(y, b, a))
	case slashedMDY:
		a, b, y, _ := splitDMY(dr.proof, '/')
		msg = fmt.Sprintf("Dates were read as month/day/year: %s on line %d can only be %s.", dr.proof, dr.line, longDate(y, a, b))
	default:
		return nil
	}
	return []Notice{{Code: NoticeDateFormat, Level: Info, Message: msg,
		Hint: "If that is wrong, write the dates as YYYY-MM-DD (for example 2020-11-01) and read the file again."}}
}

func longDate(y, m, d int) string {
	return fmt.Sprintf("%d %s %d", d, [...]string{"", "January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}[m], y)
}

// columnNotices says which column was taken for what.
func columnNotices(header []string, cols Columns, single, casesNorm string) []Notice {
	var b strings.Builder
	fmt.Fprintf(&b, "Dates come from the column %s", quoteName(cols.Date))
	if single != "" {
		fmt.Fprintf(&b, "; no column names the area, so the whole file is one area, called %s after the file", quoteName(single))
	} else {
		fmt.Fprintf(&b, ", areas from %s", quoteName(cols.Region))
	}
	switch cols.CasesAre {
	case CasesRunning:
		fmt.Fprintf(&b, ", and case counts from %s, a running total.", quoteName(cols.Cases))
	case CasesLineList:
		fmt.Fprintf(&b, ", and case counts from %s, added up per area and day.", quoteName(cols.Cases))
	default:
		fmt.Fprintf(&b, ", and new cases per day from %s.", quoteName(cols.Cases))
	}
	out := []Notice{{Code: NoticeColumns, Level: Info, Message: b.String()}}
	if single != "" {
		out[0].Hint = "If the file holds several areas, name the column that tells them apart region (or district, county, Landkreis, AGS)."
	}

	// Other columns that could have held cases.
	var others, unfit []string
	for _, h := range header {
		n := normHeader(h)
		if n == casesNorm {
			continue
		}
		switch {
		case isIn(n, casesColumn.aliases):
			others = append(others, quoteName(strings.TrimSpace(h)))
		case unfitForCases(n):
			unfit = append(unfit, quoteName(strings.TrimSpace(h)))
		}
	}
	if len(others) > 0 {
		why := "it holds new cases per day"
		if isIn(casesNorm, runningTotalNames) {
			why = "it is the only candidate"
		} else if !isIn(casesNorm, newCasesNames) {
			why = "its name comes first in fedcast's list"
		}
		msg := fmt.Sprintf("Several columns could hold the case counts: %s was taken, since %s; %s not used",
			quoteName(cols.Cases), why, strings.Join(others, ", "))
		if isIn(casesNorm, newCasesNames) {
			msg += " (usually the running total, all cases so far)"
		}
		out = append(out, Notice{Code: NoticeDailyColumn, Level: Info, Message: msg + ".",
			Hint: "To use another column, rename or delete the others."})
	}
	if len(unfit) > 0 {
		out = append(out, Notice{Code: NoticeIgnored, Level: Info,
			Message: fmt.Sprintf("Not used: %s (deaths, recoveries, weekly sums, rates and incidences are not new cases per day).", strings.Join(unfit, ", "))})
	}
	return out
}

// lineListNotice says that rows were added up.
func lineListNotice(bs []*regionBuilder, rows, skipped int) []Notice {
	summed := 0
	for _, b := range bs {
		summed += b.summed
	}
	if summed == 0 && skipped == 0 {
		return nil
	}
	msg := fmt.Sprintf("The file lists cases in several rows per area and day, as the RKI case list does (one row per age group, sex and status): "+
		"its %s rows were added up to %s area-days.", fmtInt(rows-skipped), fmtInt(rows-skipped-summed))
	if skipped > 0 {
		rowsWord := "rows"
		if skipped == 1 {
			rowsWord = "row"
		}
		msg += fmt.Sprintf(" %s %s with NeuerFall = -1 (cases taken back since the previous day's list) left out.", fmtInt(skipped), rowsWord)
	}
	return []Notice{{Code: NoticeLineList, Level: Info, Message: msg}}
}

// runningTotalShape reports whether an area's reported values, in date
// order, rise like a running total: at least MinRunningTotalDays values,
// rising on at least half of the steps, falling on at most one in 14,
// and ending at 100 or more (sparse or all-zero small-area series are
// never taken for running totals). judged is false when the series is
// too short or too small to tell.
func runningTotalShape(v []float64) (running, judged bool) {
	n := len(v)
	if n < MinRunningTotalDays || v[n-1] < 100 && maxOf(v) < 100 {
		return false, false
	}
	up, down := 0, 0
	for i := 1; i < n; i++ {
		switch {
		case v[i] > v[i-1]:
			up++
		case v[i] < v[i-1]:
			down++
		}
	}
	return 2*up >= n-1 && 14*down <= n-1 && v[n-1] >= 100, true
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// looksLikeRunningTotals judges a file: all is true when at least one
// area can be judged and every area that can be judged rises like a
// running total; names lists the areas that do.
func looksLikeRunningTotals(bs []*regionBuilder) (all bool, names []string) {
	judged := 0
	for _, b := range bs {
		r, ok := runningTotalShape(b.vals)
		if !ok {
			continue
		}
		judged++
		if r {
			names = append(names, b.name)
		}
	}
	return judged > 0 && len(names) == judged, names
}

// differences turns running totals into daily counts: each reported
// day's count is its total minus the previous reported day's. An area's
// first reported day is dropped (the cases before it are unknown); an
// area with a single reported day is dropped. A falling total (a
// correction) gives 0 for that day, and a warning.
func differences(bs []*regionBuilder, cols Columns, file string) ([]*regionBuilder, []Notice, error) {
	var falls []negCount
	var dropped []string
	out := bs[:0]
	var first int64 = -1
	for _, b := range bs {
		if len(b.days) < 2 {
			dropped = append(dropped, b.name)
			continue
		}
		if first < 0 || b.days[0] < first {
			first = b.days[0]
		}
		for i := len(b.vals) - 1; i >= 1; i-- {
			d := b.vals[i] - b.vals[i-1]
			if d < 0 {
				falls = append(falls, negCount{b.name, b.days[i], -d, b.lines[i]})
				d = 0
			}
			b.vals[i] = d
		}
		b.days, b.vals, b.lines = b.days[1:], b.vals[1:], b.lines[1:]
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, nil, &ParseError{File: file, Line: 1, Err: fmt.Errorf("%w: a running total needs two days", ErrEmpty),
			Hint: fmt.Sprintf("The column %s holds a running total (all cases so far), and each area has only one day: new cases per day "+
				"are the differences between two days. Export more days, or a column of new cases per day.", quoteName(cols.Cases))}
	}
	var notes []Notice
	names := make([]string, len(out))
	for i, b := range out {
		names[i] = b.name
	}
	n := Notice{Code: NoticeRunningTotal, Level: Warning, Areas: names, From: dayTime(first), To: dayTime(first),
		Message: fmt.Sprintf("The column %s holds a running total (all cases so far), not new cases per day. "+
			"fedcast turned it into daily counts by taking the difference from one reported day to the next; "+
			"the first day of each area (%s) is left out, since the cases before it are unknown.", quoteName(cols.Cases), fmtDay(first)),
		Hint: "Check the daily counts shown. If the file has a column of new cases per day, name it new_cases and fedcast takes it instead."}
	if len(dropped) > 0 {
		n.Message += fmt.Sprintf(" Left out for having a single day: %s.", listAreas(dropped))
	}
	notes = append(notes, n)
	if len(falls) > 0 {
		big, when, areas := summarizeCorrections(falls)
		notes = append(notes, Notice{Code: NoticeCorrection, Level: Warning, Areas: areas, Line: big.line,
			From: dayTime(falls[0].day), To: dayTime(falls[0].day),
			Message: fmt.Sprintf("The running total falls %s (corrections of earlier counts), in %s; the largest fall is %s cases on %s in %s (line %d). "+
				"Those days count 0 new cases.", when, listAreas(areas),
				strconv.FormatFloat(big.amount, 'f', -1, 64), fmtDay(big.day), quoteName(big.area), big.line),
			Hint: correctionHint})
		setSpan(&notes[len(notes)-1], falls)
	}
	return out, notes, nil
}

// missingDayNotices warns about runs of at least MinMissingRun days that
// have no row inside an area's range (they count as zero cases). Areas
// with the same run share one notice.
func missingDayNotices(bs []*regionBuilder, running bool) []Notice {
	type run struct{ from, to int64 }
	type group struct {
		areas []string
		line  int
	}
	groups := map[run]*group{}
	var order []run
	for _, b := range bs {
		for i := 1; i < len(b.days); i++ {
			if gap := b.days[i] - b.days[i-1] - 1; gap >= MinMissingRun {
				r := run{b.days[i-1] + 1, b.days[i] - 1}
				g := groups[r]
				if g == nil {
					g = &group{line: b.lines[i]}
					groups[r] = g
					order = append(order, r)
				}
				g.areas = append(g.areas, b.name)
			}
		}
	}
	var out []Notice
	for k, r := range order {
		if k == maxMissingNotices {
			rest := 0
			for _, r := range order[k:] {
				rest += len(groups[r].areas)
			}
			out = append(out, Notice{Code: NoticeMissingDays, Level: Warning,
				Message: fmt.Sprintf("%d more runs of %d or more missing days (in %d area-runs) are not listed here; they too count as zero cases.",
					len(order)-k, MinMissingRun, rest),
				Hint: "Check that the export covers every day."})
			break
		}
		g := groups[r]
		where := listAreas(g.areas)
		if len(g.areas) == len(bs) && len(bs) > 1 {
			where = fmt.Sprintf("every area (%d)", len(bs))
		}
		msg := fmt.Sprintf("No rows for %s to %s (%d days) in %s: those days count as zero reported cases.",
			fmtDay(r.from), fmtDay(r.to), r.to-r.from+1, where)
		if running {
			msg += " The running total's rise over them is counted on the day after."
		}
		out = append(out, Notice{Code: NoticeMissingDays, Level: Warning, Areas: g.areas, Line: g.line,
			From: dayTime(r.from), To: dayTime(r.to), Message: msg,
			Hint: fmt.Sprintf("If there were cases on those days, keep the study period out of them: its from and to dates (in the study file, "+
				"or --from and --to of fedcast simulate) should both lie before %s or both after %s, with 3 more days of data on each side for the 7-day average. "+
				"A backtest reads them as days without cases: correct the file if there were cases.",
				fmtDay(r.from), fmtDay(r.to))})
	}
	return out
}

// fmtInt writes n with thousands separators from five digits on (12,345).
func fmtInt(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 4 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// zeroRunNotices warns about runs of at least MinZeroRun consecutive days
// whose rows all say 0, after an average of ZeroRunAfter or more cases a
// day over the 28 days before: a sudden drop to nothing. Areas with the
// same run share one notice. bs must be sorted, with daily counts.
func zeroRunNotices(bs []*regionBuilder) []Notice {
	type run struct{ from, to int64 }
	type group struct {
		areas  []string
		line   int
		before float64 // largest average before the run
	}
	groups := map[run]*group{}
	var order []run
	for _, b := range bs {
		n := len(b.days)
		for i := 0; i < n; {
			if b.vals[i] != 0 {
				i++
				continue
			}
			j := i // the run b.days[i … j] of consecutive zero days
			for j+1 < n && b.vals[j+1] == 0 && b.days[j+1] == b.days[j]+1 {
				j++
			}
			if b.days[j]-b.days[i]+1 >= MinZeroRun {
				// Average over the 28 calendar days before the run.
				sum, k := 0.0, i-1
				for ; k >= 0 && b.days[k] >= b.days[i]-28; k-- {
					sum += b.vals[k]
				}
				if avg := sum / 28; k < i-1 && avg >= ZeroRunAfter {
					r := run{b.days[i], b.days[j]}
					g := groups[r]
					if g == nil {
						g = &group{line: b.lines[i]}
						groups[r] = g
						order = append(order, r)
					}
					g.areas = append(g.areas, b.name)
					g.before = max(g.before, avg)
				}
			}
			i = j + 1
		}
	}
	var out []Notice
	for k, r := range order {
		if k == maxMissingNotices {
			out = append(out, Notice{Code: NoticeZeroRun, Level: Warning,
				Message: fmt.Sprintf("%d more runs of %d or more days with 0 cases after many are not listed here.", len(order)-k, MinZeroRun),
				Hint:    "Check that the export covers every day."})
			break
		}
		g := groups[r]
		where := listAreas(g.areas)
		if len(g.areas) == len(bs) && len(bs) > 1 {
			where = fmt.Sprintf("every area (%d)", len(bs))
		}
		out = append(out, Notice{Code: NoticeZeroRun, Level: Warning, Areas: g.areas, Line: g.line,
			From: dayTime(r.from), To: dayTime(r.to),
			Message: fmt.Sprintf("From %s to %s (%d days) every count is 0 in %s, after %s cases a day on average in the four weeks before. "+
				"A sudden drop to nothing usually means those days were not reported, not that there were no cases.",
				fmtDay(r.from), fmtDay(r.to), r.to-r.from+1, where, strconv.FormatFloat(math.Round(g.before*10)/10, 'f', -1, 64)),
			Hint: fmt.Sprintf("If those days were not reported, keep the study period out of them: its from and to dates (in the study file, "+
				"or --from and --to of fedcast simulate) should both lie before %s or both after %s, with 3 more days of data on each side for the 7-day average. "+
				"A backtest reads them as days without cases: correct the file if there were cases.",
				fmtDay(r.from), fmtDay(r.to))})
	}
	return out
}

// negCount is a negative count in a column of new cases per day: a
// correction of earlier days, read as 0.
type negCount struct {
	area   string
	day    int64
	amount float64
	line   int
}

// correctionHint is the advice of both kinds of correction notice.
const correctionHint = "Small corrections do no harm. If one is large, the earlier days were over-counted: correct them at the source if you can, or keep the study period away from them."

// summarizeCorrections returns the largest correction, the days they fall
// on in words ("on 1 day, D" or "on N days between A and B") and the
// areas they are in, in order of first appearance. cs is not empty.
func summarizeCorrections(cs []negCount) (big negCount, when string, areas []string) {
	big = cs[0]
	lo, hi := cs[0].day, cs[0].day
	seen := map[string]bool{}
	for _, c := range cs {
		if c.amount > big.amount {
			big = c
		}
		lo, hi = min(lo, c.day), max(hi, c.day)
		if !seen[c.area] {
			seen[c.area] = true
			areas = append(areas, c.area)
		}
	}
	when = "on 1 day, " + fmtDay(lo)
	if len(cs) > 1 {
		when = fmt.Sprintf("on %s days between %s and %s", fmtInt(len(cs)), fmtDay(lo), fmtDay(hi))
	}
	return big, when, areas
}

// setSpan sets n's From and To to the first and last day of cs.
func setSpan(n *Notice, cs []negCount) {
	lo, hi := cs[0].day, cs[0].day
	for _, c := range cs {
		lo, hi = min(lo, c.day), max(hi, c.day)
	}
	n.From, n.To = dayTime(lo), dayTime(hi)
}

// negativeNotices warns about the negative counts read as 0 (see Parse):
// how many, on which days, in which areas, and the largest with its line.
func negativeNotices(negs []negCount, column string) []Notice {
	if len(negs) == 0 {
		return nil
	}
	big, when, areas := summarizeCorrections(negs)
	n := Notice{Code: NoticeCorrection, Level: Warning, Areas: areas, Line: big.line,
		Message: fmt.Sprintf("%s is negative %s (corrections of earlier counts), in %s; the largest is −%s on %s in %s (line %d). "+
			"Those days count 0 new cases.", quoteName(column), when, listAreas(areas),
			strconv.FormatFloat(big.amount, 'f', -1, 64), fmtDay(big.day), quoteName(big.area), big.line),
		Hint: correctionHint}
	setSpan(&n, negs)
	return []Notice{n}
}
