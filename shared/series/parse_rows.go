package series

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The columns of a case file's table, in the order newTable was given them.
const kDate, kRegion, kCases = 0, 1, 2

// A rowReader reads the rows of a case file's table into one
// regionBuilder per area.
type rowReader struct {
	t    *table
	data []byte
	file string
	cols Columns
	// casesNorm is the cases column's normalised header; neuerFall the
	// index of an RKI line list's NeuerFall column (-1: none); single the
	// one area's name when no column holds the area.
	casesNorm string
	neuerFall int
	single    string
	// correctable: negative counts are corrections only in a column named
	// as new cases per day (Cases_New, new_cases, …) read as daily counts;
	// anywhere else they are refused with a hint.
	correctable bool

	regions       map[string]*regionBuilder
	last          *regionBuilder
	rows, skipped int
	negs          []negCount
	dates         dateReader
}

func newRowReader(t *table, data []byte, file string, cols Columns) *rowReader {
	r := &rowReader{t: t, data: data, file: file, cols: cols, neuerFall: -1, regions: make(map[string]*regionBuilder)}
	r.cols.Date, r.cols.Region, r.cols.Cases = t.name[kDate], t.name[kRegion], t.name[kCases]
	r.casesNorm = normHeader(t.header[t.col[kCases]])
	for j, h := range t.header {
		if normHeader(h) == "neuerfall" {
			r.neuerFall = j
		}
	}
	switch {
	case isIn(r.casesNorm, runningTotalNames):
		r.cols.CasesAre = CasesRunning
	case r.casesNorm == "anzahlfall" || r.casesNorm == "anzahl_fall" || r.neuerFall >= 0:
		r.cols.CasesAre = CasesLineList
	default:
		r.cols.CasesAre = CasesDaily
	}
	for j, h := range t.header {
		if j != t.col[kDate] && j != t.col[kCases] && (t.col[kRegion] < 0 || j != t.col[kRegion]) {
			r.cols.Ignored = append(r.cols.Ignored, strings.TrimSpace(h))
		}
	}
	if t.col[kRegion] < 0 {
		r.single = fileRegionName(file)
	}
	r.correctable = r.cols.CasesAre == CasesDaily && isIn(r.casesNorm, newCasesNames)
	return r
}

// readAll reads every row; a file with a header and no rows is refused.
func (r *rowReader) readAll() error {
	for {
		rec, err := r.t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		r.rows++
		if err := r.row(rec); err != nil {
			return err
		}
	}
	if r.rows == 0 {
		return &ParseError{File: r.file, Line: 1, Err: fmt.Errorf("%w: a header but no rows", ErrEmpty),
			Hint: "The file names its columns but holds no data rows. Add one row per region and day."}
	}
	r.cols.DateFormat = r.dates.format.String()
	return nil
}

// row reads one record.
func (r *rowReader) row(rec []string) error {
	t := r.t
	ds, _ := t.cell(rec, kDate)
	if r.rows == 1 {
		if err := r.dates.detect(r.data, ds, t, kDate); err != nil {
			return err
		}
	}
	day, ok := r.dates.parse(ds)
	if !ok {
		if ds == "" {
			return t.errAt(kDate, "", ErrMissingValue, "Every row needs a date, written as YYYY-MM-DD (for example 2020-11-01).")
		}
		return t.errAt(kDate, ds, ErrBadDate, r.dates.hint(ds))
	}
	b, err := r.region(rec, day)
	if err != nil {
		return err
	}

	// RKI line lists: NeuerFall = -1 marks cases taken back since the
	// previous day's list; they are not part of today's counts.
	if r.neuerFall >= 0 && strings.TrimSpace(rec[r.neuerFall]) == "-1" {
		r.skipped++
		return nil
	}

	cs, _ := t.cell(rec, kCases)
	v, cerr, hint := parseCount(cs, t.comma)
	if cerr == ErrNegative && r.correctable {
		// A column of new cases per day that a publisher derived from
		// a running total goes negative where the total was corrected
		// downwards: that day counts 0, with a warning (negativeNotices).
		if n, err := strconv.ParseFloat(strings.TrimSpace(cs), 64); err == nil && n < 0 && n >= -MaxCount {
			r.negs = append(r.negs, negCount{area: b.name, day: day, amount: -n, line: t.line(kCases)})
			v, cerr = 0, nil
		}
	}
	if cerr != nil {
		return t.errAt(kCases, cs, cerr, hint)
	}
	line := t.line(kDate)
	if err := b.add(day, v, line); err != nil {
		return r.addError(err, b.name, ds, cs, line)
	}
	return nil
}

// region returns the builder of the record's area, new on its first row.
func (r *rowReader) region(rec []string, day int64) (*regionBuilder, error) {
	name := r.single
	if r.single == "" {
		name, _ = r.t.cell(rec, kRegion)
		if name == "" {
			return nil, r.t.errAt(kRegion, "", ErrMissingValue, "Every row needs the name or code of its region.")
		}
	}
	if r.last != nil && r.last.name == name {
		return r.last, nil
	}
	b := r.regions[name]
	if b == nil {
		if r.single == "" {
			if err := checkRegionName(name); err != nil {
				return nil, r.t.errAt(kRegion, name, err,
					"Region names may not contain line breaks, tabs or other control characters, and must be valid text (UTF-8).")
			}
		}
		b = &regionBuilder{name: strings.Clone(name), min: day, max: day, sum: r.cols.CasesAre == CasesLineList}
		r.regions[b.name] = b
	}
	r.last = b
	return b, nil
}

// addError explains why regionBuilder.add refused the row on line (date
// ds, count cs) of area name.
func (r *rowReader) addError(err error, name, ds, cs string, line int) error {
	t := r.t
	if first, ok := err.(dupError); ok {
		if r.single != "" {
			return &ParseError{File: r.file, Line: line,
				Err: fmt.Errorf("%w: no column holds the area, and %s appears on lines %d and %d", ErrMissingHeader, ds, int(first), line),
				Hint: fmt.Sprintf("No column holds the area (region), so the whole file was read as one area, but lines %d and %d both give %s. "+
					"If the file holds several areas, name their column region (or district, county, Landkreis, AGS); the first line has: %s. "+
					"If it holds one area, keep one row per day.",
					int(first), line, ds, strings.Join(t.header, string(t.comma)))}
		}
		return t.errAt(kDate, "",
			fmt.Errorf("%w: %s for region %q also on line %d", ErrDuplicate, ds, name, int(first)),
			fmt.Sprintf("Each region may have one row per day. Lines %d and %d both give %s for %q: delete one, or add them up if both are real.",
				int(first), line, ds, name))
	}
	if errors.Is(err, ErrTooLarge) {
		return t.errAt(kCases, cs, err, "Added up, this area's rows for the day exceed any real daily count; check the counts for a typing error.")
	}
	return t.errAt(kDate, ds, err,
		fmt.Sprintf("Region %q would cover more than %d days. Check this row's year for a typing error.", name, MaxSpanDays))
}

// builders returns the areas with at least one day, sorted by name.
func (r *rowReader) builders() ([]*regionBuilder, error) {
	builders := make([]*regionBuilder, 0, len(r.regions))
	for _, b := range r.regions {
		if len(b.days) > 0 {
			b.sort()
			builders = append(builders, b)
		}
	}
	if len(builders) == 0 {
		return nil, &ParseError{File: r.file, Line: 1, Err: fmt.Errorf("%w: every row has NeuerFall = -1", ErrEmpty),
			Hint: "Every row is marked as taken back (NeuerFall = -1). Choose the full case list."}
	}
	sort.Slice(builders, func(i, j int) bool { return builders[i].name < builders[j].name })
	return builders, nil
}

// dataset builds the Dataset from the rows read, after notes (the
// encoding's): a column of running totals becomes daily differences, and
// the notices say what was read and what looks wrong.
func (r *rowReader) dataset(notes []Notice) (*Dataset, error) {
	builders, err := r.builders()
	if err != nil {
		return nil, err
	}
	cols := r.cols
	// Decide whether a plain column is a running total before saying
	// which column was taken for what.
	running := cols.CasesAre == CasesRunning
	var maybe []Notice
	if !running {
		verdict, names := looksLikeRunningTotals(builders)
		switch {
		case verdict && !isIn(r.casesNorm, newCasesNames) && cols.CasesAre == CasesDaily:
			running = true
			cols.CasesAre = CasesRunning
		case len(names) > 0:
			maybe = append(maybe, Notice{Code: NoticeMaybeTotal, Level: Warning, Areas: names,
				Message: fmt.Sprintf("In %s, %s only ever rises over four weeks or more, as a running total does. It was read as new cases per day.",
					listAreas(names), quoteName(cols.Cases)),
				Hint: "Check the column: if it holds the running total (all cases so far), give fedcast a column of new cases per day instead, or name it cumulative_cases and fedcast will take the differences."})
		}
	}
	notes = append(notes, columnNotices(r.t.header, cols, r.single, r.casesNorm)...)
	notes = append(notes, r.dates.notices()...)
	notes = append(notes, lineListNotice(builders, r.rows, r.skipped)...)
	notes = append(notes, maybe...)
	notes = append(notes, negativeNotices(r.negs, cols.Cases)...)
	if running {
		var n []Notice
		builders, n, err = differences(builders, cols, r.file)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	notes = append(notes, missingDayNotices(builders, running)...)
	notes = append(notes, zeroRunNotices(builders)...)

	d := &Dataset{Regions: make([]*Region, 0, len(builders)), Columns: cols, Notices: notes}
	for _, b := range builders {
		d.Regions = append(d.Regions, b.region())
	}
	return d, nil
}
