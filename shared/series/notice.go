package series

import (
	"fmt"
	"strings"
	"time"
)

// Level says how much a Notice matters.
type Level string

const (
	// Info: the reader made a choice the person should know about (which
	// column it took, how it read the dates); nothing is wrong.
	Info Level = "info"
	// Warning: the data were changed or may not mean what the model
	// assumes (a running total converted, long runs of missing days,
	// corrections). Read it before training on the file.
	Warning Level = "warning"
)

// Notice codes. They are stable identifiers (JSON, tests); the wording
// of Message and Hint may change.
const (
	NoticeColumns      = "columns"       // which column was taken for what
	NoticeDailyColumn  = "daily_column"  // a daily column was preferred over a running total
	NoticeRunningTotal = "running_total" // a running total was converted into daily counts
	NoticeMaybeTotal   = "maybe_running_total"
	NoticeLineList     = "line_list"    // several rows per area and day were added up
	NoticeEncoding     = "windows_1252" // the file was not UTF-8 and was read as Windows-1252
	NoticeDateFormat   = "date_format"  // dates were read as day.month.year (or day/month/year, month/day/year)
	NoticeMissingDays  = "missing_days" // a long run of days is missing from the file
	NoticeZeroRun      = "zero_run"     // counts drop to 0 and stay there for a long run of days
	NoticeCorrection   = "correction"   // a running total fell: a correction
	NoticeIgnored      = "ignored_columns"
)

// Notice is something Parse did or noticed that the person who made the
// file should know. Notices are data, not errors: the file was read. The
// same Message and Hint are shown by `fedcast data check`, `fedcast
// client` and the browser page (one source of wording).
type Notice struct {
	Code    string // one of the Notice* constants
	Level   Level
	Message string // what happened, in plain words
	Hint    string // what to do about it ("" if nothing)
	Line    int    // 1-based line in the file it refers to, 0 if none
	// Areas the notice concerns (nil: the whole file). Long lists are
	// shortened in Message but kept whole here.
	Areas []string
	// From and To are the first and last day concerned (missing days,
	// corrections); zero if the notice is not about days.
	From, To time.Time
}

// String formats the notice as "level: message (hint)" on one line.
func (n Notice) String() string {
	s := string(n.Level) + ": " + n.Message
	if n.Hint != "" {
		s += " " + n.Hint
	}
	return s
}

// Columns records which header column Parse took for each role, as
// written in the file's header.
type Columns struct {
	Date   string // the date column
	Region string // the area column; "" when the whole file is one area
	Cases  string // the column the daily counts come from
	// CasesAre says what the cases column held: "daily" (new cases per
	// day, used as they are), "running total" (converted by differences)
	// or "line list" (several rows per area and day, added up).
	CasesAre string
	// DateFormat is how dates were written: "YYYY-MM-DD", "DD.MM.YYYY",
	// "DD/MM/YYYY" or "MM/DD/YYYY".
	DateFormat string
	// Encoding is "UTF-8" or "Windows-1252".
	Encoding string
	// Ignored lists the header columns that were not used.
	Ignored []string
}

// What the cases column held.
const (
	CasesDaily    = "daily"
	CasesRunning  = "running total"
	CasesLineList = "line list"
)

// Warnings returns the notices of level Warning.
func (d *Dataset) Warnings() []Notice {
	var w []Notice
	for _, n := range d.Notices {
		if n.Level == Warning {
			w = append(w, n)
		}
	}
	return w
}

// AboutDays reports whether the notice is about a stretch of days that a
// study window should avoid (NoticeMissingDays, NoticeZeroRun); From and
// To are then its first and last day.
func (n Notice) AboutDays() bool { return n.Code == NoticeMissingDays || n.Code == NoticeZeroRun }

// MissingDaysIn returns the notices about missing or unreported days
// (AboutDays) that overlap the days from … to (both inclusive; a zero
// time leaves that end open), for a study whose window should avoid them.
func (d *Dataset) MissingDaysIn(from, to time.Time) []Notice {
	out := d.DayNoticesIn(from, to)
	for i, n := range out {
		out[i] = n.ForLHA()
	}
	return out
}

// DayNoticesIn returns the notices about missing or unreported days
// (AboutDays) that overlap the days from … to, worded as they were read:
// for whoever holds the whole file and chooses the period (a coordinator,
// a backtest or a simulation), not for an LHA (MissingDaysIn).
func (d *Dataset) DayNoticesIn(from, to time.Time) []Notice {
	var out []Notice
	for _, n := range d.Notices {
		if !n.AboutDays() || n.From.IsZero() {
			continue
		}
		if !to.IsZero() && n.From.After(Date(to)) || !from.IsZero() && n.To.Before(Date(from)) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// ForLHA rewrites the hint of a notice about missing or unreported days
// that fall inside a study's period for the person who can act on it: the
// LHA can export the days; only the coordinator can move the study
// period, so that part says "tell your coordinator". Other notices are
// returned as they are.
func (n Notice) ForLHA() Notice {
	if n.Code == NoticeCorrection {
		n.Hint = strings.Replace(n.Hint, "or keep the study period away from them.",
			"or tell your coordinator: the study period should stay away from them.", 1)
	}
	if !n.AboutDays() || n.From.IsZero() {
		return n
	}
	a, b := n.From.Format(time.DateOnly), n.To.Format(time.DateOnly)
	what := "has no rows"
	if n.Code == NoticeZeroRun {
		what = "has only zeros"
	}
	n.Hint = fmt.Sprintf("Your file %s for %s to %s, inside the study period. If there were cases on those days, export them and choose the file again. "+
		"If they cannot be had, tell your coordinator: the study period should lie wholly before %s or after %s.", what, a, b, a, b)
	return n
}

// listAreas names an area, or up to three areas and how many more.
func listAreas(names []string) string {
	if len(names) == 1 {
		return "area " + quoteName(names[0])
	}
	q := make([]string, 0, 3)
	for _, n := range names[:min(len(names), 3)] {
		q = append(q, quoteName(n))
	}
	s := strings.Join(q, ", ")
	if len(names) > 3 {
		s += fmt.Sprintf(" and %d more", len(names)-3)
	}
	return fmt.Sprintf("%d areas (%s)", len(names), s)
}

func quoteName(s string) string { return "\u201c" + s + "\u201d" }

func fmtDay(d int64) string {
	return time.Unix(d*86400, 0).UTC().Format(time.DateOnly)
}

func dayTime(d int64) time.Time { return time.Unix(d*86400, 0).UTC() }
