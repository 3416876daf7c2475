package series

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. A *ParseError wraps one of the parse sentinels, so
// errors.Is(err, ErrNegative) works on anything Parse returns.
var (
	// ErrEmpty: the file has no header, or a header and no data rows.
	ErrEmpty = errors.New("series: no data")
	// ErrMissingHeader: the first line does not name a date, a region or
	// a cases column.
	ErrMissingHeader = errors.New("series: missing column")
	// ErrDuplicateColumn: two header columns have the same name.
	ErrDuplicateColumn = errors.New("series: duplicate column")
	// ErrFieldCount: a row has a different number of fields than the header.
	ErrFieldCount = errors.New("series: wrong number of fields")
	// ErrSyntax: the CSV itself is malformed (for example a stray quote).
	ErrSyntax = errors.New("series: malformed CSV")
	// ErrMissingValue: a required cell is empty.
	ErrMissingValue = errors.New("series: empty value")
	// ErrBadDate: a date is not YYYY-MM-DD (or YYYY/MM/DD), or no such day exists.
	ErrBadDate = errors.New("series: bad date")
	// ErrBadRegion: a region name holds control characters or invalid UTF-8.
	ErrBadRegion = errors.New("series: bad region name")
	// ErrNegative: a count is below zero.
	ErrNegative = errors.New("series: negative count")
	// ErrNotNumber: a count or population is not a number at all.
	ErrNotNumber = errors.New("series: not a number")
	// ErrNotInteger: a count is a number but not a whole one.
	ErrNotInteger = errors.New("series: count is not a whole number")
	// ErrNotFinite: a count is NaN or ±Inf.
	ErrNotFinite = errors.New("series: count is not finite")
	// ErrTooLarge: a count exceeds MaxCount.
	ErrTooLarge = errors.New("series: count too large")
	// ErrNotPositive: a population is zero or negative.
	ErrNotPositive = errors.New("series: population must be positive")
	// ErrDuplicate: the same (date, region), or the same region in a
	// population file, appears twice.
	ErrDuplicate = errors.New("series: duplicate row")
	// ErrSpreadsheet: the file is a spreadsheet workbook (.xlsx, .xls) or
	// a compressed archive, not CSV text.
	// It is an ErrNotText, with the same message.
	ErrSpreadsheet error = sameText{ErrNotText}
	// ErrNotText: the file's content is not text at all (an image, a
	// program, a PDF, an archive, …), whatever its name says. The error
	// reads "this is not a text (CSV) file; it looks like <kind>".
	ErrNotText = errors.New("series: this is not a text (CSV) file")
	// ErrSpan: one region's dates span more than MaxSpanDays (usually a
	// mistyped year).
	ErrSpan = errors.New("series: date range too long")

	// ErrOption: a WindowOptions field or split setting is invalid.
	ErrOption = errors.New("series: invalid option")
	// ErrNotCovered: a region's data do not cover the days a study window needs.
	ErrNotCovered = errors.New("series: data do not cover the study window")
	// ErrTooShort: a region has too few days to form a single window.
	ErrTooShort = errors.New("series: series too short")
)

// ParseError describes a problem in one cell (or line) of a CSV file.
// Line and Column are 1-based; Column counts fields (the spreadsheet
// column), not bytes. Line or Column are 0 when the problem is not tied
// to one (an empty file, say). Field is the column's name as written in
// the file's header. Hint is a sentence a non-technical user can act on.
type ParseError struct {
	File   string // source name given to Parse
	Line   int    // 1-based line of the record (0: whole file)
	Column int    // 1-based field number (0: whole line)
	Field  string // header name of the column, "" if none
	Value  string // offending cell, "" if none
	Err    error  // a sentinel, possibly wrapped with detail
	Hint   string // what to do about it
}

// Error formats the error as "file:line:column (field): problem "value"".
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if e.Field != "" {
		b.WriteString(" (")
		b.WriteString(e.Field)
		b.WriteByte(')')
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("series: parse error")
	}
	if e.Value != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(e.Value))
	}
	return b.String()
}

// Unwrap returns the underlying error (a sentinel, possibly wrapped).
func (e *ParseError) Unwrap() error { return e.Err }

// sameText is a distinct sentinel that reads, and errors.Is, as err.
type sameText struct{ err error }

func (e sameText) Error() string { return e.err.Error() }
func (e sameText) Unwrap() error { return e.err }
