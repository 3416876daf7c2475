package series

import (
	"fmt"
	"time"
)

// NeededDays returns the first and last day every file must cover for the
// study window of opt: From minus the 7-day average's days before it, and
// To plus its days after it (centred: 3 and 3, trailing: 6 and 0). A
// zero From (To) gives a zero first (last): the window follows the data.
// The study coordinator, the client and the page all name these days.
func NeededDays(opt WindowOptions) (first, last time.Time) {
	before, after := opt.Smoothing.offsets()
	if !opt.From.IsZero() {
		first = Date(opt.From).AddDate(0, 0, -before)
	}
	if !opt.To.IsZero() {
		last = Date(opt.To).AddDate(0, 0, after)
	}
	return first, last
}

// LastUsableTo returns the latest study end (To) that files ending on day
// end can serve: end minus the days the 7-day average reads after a day.
func LastUsableTo(end time.Time, s Smoothing) time.Time {
	_, after := s.offsets()
	return Date(end).AddDate(0, 0, -after)
}

// Margin says in words how many days the 7-day average reads around a
// study day: "3 days before and 3 after" or "6 days before".
func (s Smoothing) Margin() string {
	before, after := s.offsets()
	if after == 0 {
		return fmt.Sprintf("%d days before", before)
	}
	return fmt.Sprintf("%d days before and %d after", before, after)
}

// CoverageError is ErrNotCovered for one region: the days it lacks, the
// days its data run and the days the study window needs.
type CoverageError struct {
	Region              string
	Missing             string // "2022-05-01 … 2022-05-03", or two such ranges joined by "and"
	DataFirst, DataLast time.Time
	From, To            time.Time // the study window
	NeedFirst, NeedLast time.Time
	Smoothing           Smoothing
}

func (e *CoverageError) Error() string {
	return fmt.Sprintf("%v: region %q has no data for %s (its data run %s … %s; the study window %s … %s with the %s 7-day average needs %s … %s)",
		ErrNotCovered, e.Region, e.Missing, isoDay(e.DataFirst), isoDay(e.DataLast), isoDay(e.From), isoDay(e.To), e.Smoothing,
		isoDay(e.NeedFirst), isoDay(e.NeedLast))
}

func (e *CoverageError) Unwrap() error { return ErrNotCovered }

// Hint says what the LHA can do: export the missing days, or, for days
// it cannot export (after its data end), tell the coordinator which
// study end its file can serve.
func (e *CoverageError) Hint() string {
	h := fmt.Sprintf("Your file has no rows for %s in area %s. This study needs every day from %s to %s (the study period %s to %s, plus %s for the 7-day average). Export a file that covers them.",
		e.Missing, e.Region, isoDay(e.NeedFirst), isoDay(e.NeedLast), isoDay(e.From), isoDay(e.To), e.Smoothing.Margin())
	if e.NeedLast.After(e.DataLast) {
		h += fmt.Sprintf(" If those days have not been reported yet, tell your coordinator: with data up to %s the study period can end on %s at the latest.",
			isoDay(e.DataLast), isoDay(LastUsableTo(e.DataLast, e.Smoothing)))
	}
	return h
}

func isoDay(t time.Time) string { return t.Format(time.DateOnly) }
