package series

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A column role the reader looks for, with its accepted header names in
// order of preference (compared after normalisation: lower case, spaces
// and hyphens read as underscores).
type column struct {
	role     string   // canonical name, used in messages
	aliases  []string // accepted header names, preferred first
	optional bool
	// unfit, if set, names header columns that look related but must
	// never be taken for this role (deaths, weekly sums, rates); a
	// missing-column hint mentions them.
	unfit func(norm string) bool
}

// Accepted header names. When several columns match one role, the one
// whose name comes first in the list wins (county_id beats county, a
// column of new cases per day beats a running total).
var (
	dateColumn = column{role: "date", aliases: []string{
		"date", "day", "reporting_date", "report_date", "date_reported", "meldedatum", "datum",
		"refdatum", "reference_date", "tag",
	}}
	regionColumn = column{role: "region", aliases: []string{
		"region", "region_id", "county_id", "id", "lha", "lha_id", "district",
		"district_id", "county", "area", "area_id", "location", "idlandkreis", "ags",
		"landkreis_id", "kreis_id", "kreisschluessel", "kreisschlüssel", "landkreis", "kreis",
		"gemeinde_id", "gemeinde", "bezirk", "stadtkreis", "kommune", "fips", "county_fips",
		"county_name", "district_name", "region_name", "area_name", "municipality",
		"idbundesland", "bundesland",
	}}
	casesColumn = column{role: "cases", aliases: append(append(append([]string(nil),
		newCasesNames...), plainCasesNames...), runningTotalNames...), unfit: unfitForCases}
	populationColumn = column{role: "population", aliases: []string{
		"population", "pop", "inhabitants", "ewz",
	}}
)

// Names of case columns by what they hold. A column named as new cases
// per day is preferred to a plain one, and a plain one to a running
// total; a plain column that only ever rises is read as a running total
// (see Parse).
var (
	newCasesNames = []string{
		"cases_new", "new_cases", "newcases", "daily_cases", "cases_daily", "new_confirmed",
		"neue_faelle", "neue_fälle", "neuefaelle", "neuefälle", "anzahlfall", "anzahl_fall",
	}
	plainCasesNames = []string{
		"cases", "count", "value", "confirmed", "faelle", "fälle", "fallzahl", "fallzahlen", "anzahl",
		"infections", "infektionen",
	}
	runningTotalNames = []string{
		"cases_cumulative", "cumulative_cases", "cases_total", "total_cases", "confirmed_cumulative",
		"faelle_kumuliert", "fälle_kumuliert", "faelle_gesamt", "fälle_gesamt", "anzahl_kumuliert",
	}
)

// unfitForCases reports header names that hold something other than
// daily case counts: deaths, recoveries, weekly sums, rates per
// inhabitants, incidences, percentages.
func unfitForCases(h string) bool {
	for _, w := range []string{
		"death", "tod", "verstorb", "recover", "genes", "last_week", "week", "woche",
		"per_million", "per_100k", "100k", "100000", "per_capita", "incidence", "inzidenz",
		"rate", "prozent", "percent", "7day", "7_day", "7tage", "7_tage",
	} {
		if strings.Contains(h, w) {
			return true
		}
	}
	return false
}

func isIn(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// table reads a delimited file with a header line, maps the wanted roles
// to columns and hands out data rows with their positions.
type table struct {
	file   string
	cr     *csv.Reader
	comma  rune
	nf     int      // number of header fields
	col    []int    // column index per wanted role, -1 if absent
	name   []string // header name per wanted role as written
	header []string
}

func normHeader(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}

// sniff strips a UTF-8 byte-order mark and picks the delimiter (',', ';'
// or tab, whichever occurs most often in the first line; ',' on ties).
func sniff(br *bufio.Reader) (comma rune, err error) {
	head, _ := br.Peek(br.Size())
	if len(head) >= 2 && (head[0] == 0xFF && head[1] == 0xFE || head[0] == 0xFE && head[1] == 0xFF) {
		return 0, &ParseError{Err: fmt.Errorf("%w: file is UTF-16 encoded", ErrSyntax),
			Hint: "Save the file as \"CSV UTF-8\" (comma separated) and try again."}
	}
	if bytes.HasPrefix(head, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
		head = head[3:]
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	comma = ','
	best := bytes.Count(head, []byte{','})
	if n := bytes.Count(head, []byte{';'}); n > best {
		comma, best = ';', n
	}
	if n := bytes.Count(head, []byte{'\t'}); n > best {
		comma = '\t'
	}
	return comma, nil
}

func newTable(r io.Reader, file string, want ...column) (*table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	comma, err := sniff(br)
	if err != nil {
		err.(*ParseError).File = file
		return nil, err
	}
	cr := csv.NewReader(br)
	cr.Comma = comma
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	// Tolerate `a, "b"`; not with tabs, where trimming would eat empty cells.
	cr.TrimLeadingSpace = comma != '\t'
	t := &table{file: file, cr: cr, comma: comma}

	rec, err := t.read()
	if err == io.EOF {
		return nil, &ParseError{File: file, Err: fmt.Errorf("%w: the file is empty", ErrEmpty),
			Hint: "The file has no content. Choose the file that holds your daily case counts."}
	}
	if err != nil {
		return nil, err
	}
	t.header = append([]string(nil), rec...)
	t.nf = len(rec)
	norm := make([]string, len(rec))
	for j, h := range rec {
		norm[j] = normHeader(h)
	}
	t.col = make([]int, len(want))
	t.name = make([]string, len(want))
	for k, c := range want {
		t.col[k] = -1
	aliases:
		for _, a := range c.aliases {
			for j, h := range norm {
				if h != a {
					continue
				}
				if t.col[k] >= 0 {
					return nil, &ParseError{File: file, Line: 1, Column: j + 1, Field: rec[j],
						Err:  fmt.Errorf("%w: %q appears twice", ErrDuplicateColumn, strings.TrimSpace(rec[j])),
						Hint: fmt.Sprintf("The first line names the column %q twice. Rename or delete one of them.", strings.TrimSpace(rec[j]))}
				}
				t.col[k] = j
			}
			if t.col[k] >= 0 {
				break aliases
			}
		}
		if t.col[k] >= 0 {
			t.name[k] = strings.TrimSpace(rec[t.col[k]])
			continue
		}
		if c.optional {
			continue
		}
		hint := fmt.Sprintf("The first line must name the columns. No column holds the %s; accepted names are: %s.",
			c.role, strings.Join(c.aliases, ", "))
		if c.unfit != nil {
			var unfit []string
			for j, h := range norm {
				if c.unfit(h) {
					unfit = append(unfit, strconv.Quote(strings.TrimSpace(rec[j])))
				}
			}
			if len(unfit) > 0 {
				hint += fmt.Sprintf(" The columns %s were not taken: they do not hold new cases per day.", strings.Join(unfit, ", "))
			}
		}
		if c.role == casesColumn.role {
			hint += wideHint(rec, t.col, comma)
		}
		for _, f := range rec {
			if _, ok := parseDay(strings.TrimSpace(f)); ok {
				hint = "The first line looks like data, not column names. Add a header line such as: " +
					strings.Join(roleNames(want), string(comma))
				break
			}
		}
		return nil, &ParseError{File: file, Line: 1,
			Err:  fmt.Errorf("%w: no %s column", ErrMissingHeader, c.role),
			Hint: hint}
	}
	return t, nil
}

// wideHint explains a table with one column per area (a header such as
// date,01001,01002,…), the layout many spreadsheets keep: beside a date
// column that was found, two or more columns hold no known name (the
// columns found for other roles do not count). "" for
// any other header.
func wideHint(rec []string, found []int, comma rune) string {
	if len(found) == 0 || found[0] < 0 {
		return "" // no date column: not this layout
	}
	var areas []string
	for j, h := range rec {
		if !slices.Contains(found, j) && strings.TrimSpace(h) != "" {
			areas = append(areas, strconv.Quote(strings.TrimSpace(h)))
		}
	}
	if len(areas) < 2 {
		return ""
	}
	names := strings.Join(areas[:2], ", ")
	if len(areas) > 2 {
		names += ", …"
	}
	return fmt.Sprintf(" If the other %d columns (%s) are areas, the table has one column per area: fedcast reads one row per day and area instead, "+
		"with the columns %s. In a spreadsheet, turn the table round (\"unpivot\") so that each row holds a date, an area and its cases.",
		len(areas), names, strings.Join([]string{"date", "region", "cases"}, string(comma)))
}

func roleNames(cols []column) []string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = c.role
	}
	return s
}

// read returns the next record, converting CSV syntax errors.
func (t *table) read() ([]string, error) {
	rec, err := t.cr.Read()
	if err == nil || err == io.EOF {
		return rec, err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, &ParseError{File: t.file, Line: pe.Line,
			Err:  fmt.Errorf("%w: %w (character %d)", ErrSyntax, pe.Err, pe.Column),
			Hint: "A quote character (\") is out of place on this line. Quote whole cells only, or remove the quote."}
	}
	return nil, &ParseError{File: t.file, Err: err, Hint: "The file could not be read."}
}

// next returns the next non-blank data row (io.EOF at the end). Rows whose
// cells are all empty are skipped.
func (t *table) next() ([]string, error) {
	for {
		rec, err := t.read()
		if err != nil {
			return nil, err
		}
		blank := true
		for _, f := range rec {
			if strings.TrimSpace(f) != "" {
				blank = false
				break
			}
		}
		if blank {
			continue
		}
		if len(rec) != t.nf {
			line, _ := t.cr.FieldPos(0)
			return nil, &ParseError{File: t.file, Line: line,
				Err: fmt.Errorf("%w: %d fields, the header has %d", ErrFieldCount, len(rec), t.nf),
				Hint: fmt.Sprintf("This line has %d values but the first line names %d columns. "+
					"Look for an extra or missing %s, or a cell that needs quotes.", len(rec), t.nf, delimName(t.comma))}
		}
		return rec, nil
	}
}

func delimName(c rune) string {
	switch c {
	case ';':
		return "semicolon"
	case '\t':
		return "tab"
	}
	return "comma"
}

// cell returns role k's trimmed value in rec and whether the role has a column.
func (t *table) cell(rec []string, k int) (string, bool) {
	if t.col[k] < 0 {
		return "", false
	}
	return strings.TrimSpace(rec[t.col[k]]), true
}

// errAt builds a ParseError for role k's cell in the current record.
func (t *table) errAt(k int, value string, err error, hint string) *ParseError {
	line, _ := t.cr.FieldPos(t.col[k])
	return &ParseError{File: t.file, Line: line, Column: t.col[k] + 1, Field: t.name[k],
		Value: value, Err: err, Hint: hint}
}

// line returns the 1-based line where role k's cell of the current record starts.
func (t *table) line(k int) int {
	l, _ := t.cr.FieldPos(t.col[k])
	return l
}
