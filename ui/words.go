package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// Problem is an error as the page shows it: what went wrong, where, and
// what to do about it.
type Problem struct {
	Title  string // one line: what went wrong
	Where  string // "line 12, column 3 (cases)", "" when not tied to a place
	Detail string // the value or the technical message
	Fix    string // what to do
}

// DataProblem explains an error from reading or checking a CSV file.
func DataProblem(err error) *Problem {
	var pe *series.ParseError
	var ce *series.CoverageError
	if errors.As(err, &pe) {
		p := &Problem{Title: parseTitle(pe.Err), Fix: pe.Hint}
		switch {
		case pe.Line > 0 && pe.Column > 0:
			p.Where = fmt.Sprintf("line %d, column %d", pe.Line, pe.Column)
		case pe.Line > 0:
			p.Where = fmt.Sprintf("line %d", pe.Line)
		}
		if pe.Field != "" && p.Where != "" {
			p.Where += " (" + pe.Field + ")"
		}
		if pe.Value != "" {
			p.Detail = "The cell holds " + strconv.Quote(pe.Value) + "."
		}
		if _, kind, ok := strings.Cut(pe.Err.Error(), "; it looks like "); ok && errors.Is(pe.Err, series.ErrNotText) {
			p.Detail = "It looks like " + kind + ", judged from its content, not its name."
		}
		if p.Fix == "" {
			p.Fix = "Correct the file in your spreadsheet program, save it as CSV and choose it again."
		}
		return p
	}
	switch {
	case errors.As(err, &ce):
		return &Problem{Title: "The file does not cover the days this study needs", Detail: TechLine(err), Fix: ce.Hint()}
	case errors.Is(err, series.ErrNotCovered), errors.Is(err, series.ErrTooShort):
		return &Problem{Title: "The file does not cover the days this study needs", Detail: TechLine(err),
			Fix: "Export a file that includes every day of the study period (and a few days around it), then choose it again."}
	}
	if p := publicProblem(err); p != nil {
		return p
	}
	return &Problem{Title: "The file could not be read", Detail: TechLine(err),
		Fix: "Check that it is the CSV export of your daily case counts (columns date, region, cases) and choose it again."}
}

func parseTitle(err error) string {
	for _, c := range []struct {
		sentinel error
		text     string
	}{
		{series.ErrEmpty, "The file holds no data rows"},
		{series.ErrMissingHeader, "A required column is missing"},
		{series.ErrDuplicateColumn, "Two columns have the same name"},
		{series.ErrFieldCount, "A row has the wrong number of cells"},
		{series.ErrSyntax, "The file is not valid CSV"},
		{series.ErrMissingValue, "A required cell is empty"},
		{series.ErrBadDate, "A date cannot be read"},
		{series.ErrBadRegion, "An area name cannot be read"},
		{series.ErrNegative, "A case count is negative"},
		{series.ErrNotNumber, "A case count is not a number"},
		{series.ErrNotInteger, "A case count is not a whole number"},
		{series.ErrNotFinite, "A case count is not a number"},
		{series.ErrTooLarge, "A case count is implausibly large"},
		{series.ErrDuplicate, "The same day appears twice for one area"},
		{series.ErrSpan, "The dates span too many years"},
		{series.ErrSpreadsheet, "This is a spreadsheet or an archive, not a CSV file"},
		{series.ErrNotText, "This is not a text (CSV) file"},
	} {
		if errors.Is(err, c.sentinel) {
			return c.text
		}
	}
	return "The file could not be read"
}

// FormatBytes gives a byte count with its unit: "94,264 bytes (92 KB)".
func FormatBytes(n int64) string {
	s := FormatCount(float64(n)) + " bytes"
	switch {
	case n >= 1<<20:
		s += " (" + strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB)"
	case n >= 1<<10:
		s += " (" + strconv.FormatFloat(math.Round(float64(n)/(1<<10)), 'f', 0, 64) + " KB)"
	}
	return s
}

// FormatEpsilon gives ε with three significant digits ("∞" for none).
func FormatEpsilon(eps float64) string {
	if math.IsInf(eps, 1) || math.IsNaN(eps) {
		return "∞"
	}
	return strconv.FormatFloat(eps, 'g', 3, 64)
}

// FormatDelta gives δ as "1 in 100,000" when it is a power of ten.
func FormatDelta(delta float64) string {
	if delta <= 0 {
		return "0"
	}
	inv := 1 / delta
	if r := math.Round(inv); math.Abs(inv-r) < 1e-6*r {
		return "1 in " + FormatCount(r)
	}
	return strconv.FormatFloat(delta, 'g', 3, 64)
}

// FormatPercent gives a fraction as a percentage: 0.25 → "25 %".
func FormatPercent(f float64) string {
	v := strconv.FormatFloat(f*100, 'f', 1, 64)
	return strings.TrimSuffix(v, ".0") + " %"
}

// FormatDuration formats a duration for people: "less than a tenth of a
// second", "0.4 seconds", "1 second", "12 seconds", "3.5 minutes".
func FormatDuration(d time.Duration) string {
	s := d.Seconds()
	switch {
	case math.Round(s*10) == 0:
		return "less than a tenth of a second"
	case math.Round(s*10) == 10:
		return "1 second"
	case s < 10:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " seconds"
	case s < 120:
		return strconv.FormatFloat(math.Round(s), 'f', -1, 64) + " seconds"
	}
	return strconv.FormatFloat(math.Round(s/6)/10, 'f', -1, 64) + " minutes"
}

// Plural gives a count with its noun: "1 area", "3 areas", "0 areas"
// (nouns with a plain -s plural).
func Plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return FormatCount(float64(n)) + " " + one + "s"
}

// goPrefix matches Go package prefixes in an error message ("series: ").
var goPrefix = regexp.MustCompile(`\b(series|session|protocol|study|privacy|fl|nn|model|forecast|strconv|json): `)

// TechLine is an error's message as the page shows it under a problem:
// the technical detail, without Go package prefixes.
// The first letter is capitalised: it stands as a sentence.
func TechLine(err error) string {
	s := goPrefix.ReplaceAllString(err.Error(), "")
	if r, n := utf8.DecodeRuneInString(s); n > 0 {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	return s
}

// studyDaysFix says which days a file must cover for the study, the same
// days as study new and serve print (series.NeededDays).
func studyDaysFix(st protocol.Study) string {
	opt, err := st.WindowOptions()
	if err != nil {
		return fmt.Sprintf("This study uses the days from %s to %s. Export a file that covers them, then choose it again.", orDash(st.From), orDash(st.To))
	}
	first, last := series.NeededDays(opt)
	day := func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.Format(time.DateOnly)
	}
	return fmt.Sprintf("This study needs every day from %s to %s (the study period %s to %s, plus %s for the 7-day average). "+
		"Export a file that covers them, then choose it again; if those days cannot be had, tell your coordinator.",
		day(first), day(last), orDash(st.From), orDash(st.To), opt.Smoothing.Margin())
}

// joinRefusals are the coordinator's refusals of a join that the page
// explains in words of their own.
var joinRefusals = map[protocol.Code]Problem{
	protocol.CodeUnauthorized: {Title: "This join link is not valid",
		Fix: "Open the exact link your study coordinator sent you (it ends in /join# followed by a code). If it still fails, ask the coordinator for a new link."},
	protocol.CodeReplaced: {Title: "This link was opened in another tab or on another computer",
		Fix: "Use only one window per link. Close the other one and reload this page."},
	protocol.CodeVersion: {Title: "This page and the coordinator do not match",
		Fix: "Reload the page (your browser may hold an old copy). If it persists, tell your study coordinator."},
	protocol.CodeFinished: {Title: "This study has already ended",
		Fix: "Nothing to do: the study coordinator has the final model."},
}

// JoinProblem explains a failure to join.
func JoinProblem(err error) *Problem {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		if p, ok := joinRefusals[pe.Code]; ok {
			p.Detail = pe.Message
			return &p
		}
		return &Problem{Title: "The coordinator refused the connection", Detail: TechLine(pe),
			Fix: "Reload the page in a minute. If it persists, tell your study coordinator."}
	}
	return &Problem{Title: "The study coordinator cannot be reached", Detail: TechLine(err),
		Fix: "Check your internet connection and reload the page. If it persists, the coordinator may be offline: tell your study coordinator."}
}

// RunProblem explains why training stopped.
func RunProblem(err error) *Problem {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &Problem{Title: "The coordinator stopped this session", Detail: TechLine(pe),
			Fix: "Reload the page to join again. If it persists, tell your study coordinator."}
	}
	if errors.Is(err, context.Canceled) {
		return &Problem{Title: "You stopped taking part", Fix: "Reload the page to join again."}
	}
	return &Problem{Title: "Training stopped", Detail: TechLine(err),
		Fix: "Reload the page to join again; the study goes on without you meanwhile. If it persists, tell your study coordinator."}
}

// RefusalWords says in plain words why the coordinator did not count an
// update (session.RefusalWords: the headless client says the same).
func RefusalWords(e *protocol.Error) string { return session.RefusalWords(e) }

// evaluationNote says why part of the evaluation is missing ("" when
// nothing is).
func evaluationNote(err error) string {
	var le *session.LayoutError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		return fmt.Sprintf("The final model has %d numbers, the study's layout %d: no forecast.", le.Have, le.Want)
	case errors.Is(err, session.ErrUnknownModel):
		return "The study's model type is unknown to this page: no forecast."
	case errors.Is(err, series.ErrTooShort), errors.Is(err, series.ErrNotCovered):
		return "No forecast: your file has too few days for this study's model to forecast from."
	case errors.Is(err, session.ErrNoTestDays):
		return "Your file has no test days: all its windows were used for training."
	}
	return TechLine(err)
}
