package series

import (
	"sort"
	"time"
)

// Day is the length of one step of a series.
const Day = 24 * time.Hour

// Region is one area's daily series of newly reported cases.
//
// Cases[i] is the count reported on Start + i days. There are no gaps:
// days missing from the source file between a region's first and last
// date are stored as 0.
type Region struct {
	Name  string    // identifier as written in the file (leading zeros kept)
	Start time.Time // UTC midnight of Cases[0]
	Cases []float64 // daily new cases, one per day, no gaps
}

// End returns the date (UTC midnight) of the last day, or Start-1 day for
// an empty series.
func (r *Region) End() time.Time {
	return r.Start.AddDate(0, 0, len(r.Cases)-1)
}

// At returns the count reported on the calendar date of d (as read in d's
// own location), and false when that day lies outside the series.
func (r *Region) At(d time.Time) (float64, bool) {
	i := dayIndex(r.Start, d)
	if i < 0 || i >= len(r.Cases) {
		return 0, false
	}
	return r.Cases[i], true
}

// Index returns the index into Cases of the calendar date of d; it may be
// negative or ≥ len(Cases) when d lies outside the series.
func (r *Region) Index(d time.Time) int { return dayIndex(r.Start, d) }

// Date returns the date of Cases[i].
func (r *Region) Date(i int) time.Time { return r.Start.AddDate(0, 0, i) }

// Dataset is a set of regions, sorted by Name, each with a unique name.
type Dataset struct {
	Regions []*Region

	// Columns and Notices describe how Parse read the file: which column
	// it took for what, and what it did or noticed on the way (a running
	// total converted, long runs of missing days, …). Both are zero for a
	// dataset not made by Parse.
	Columns Columns
	Notices []Notice
}

// Region returns the region with the given name, or nil if absent.
func (d *Dataset) Region(name string) *Region {
	i := sort.Search(len(d.Regions), func(i int) bool { return d.Regions[i].Name >= name })
	if i < len(d.Regions) && d.Regions[i].Name == name {
		return d.Regions[i]
	}
	return nil
}

// Names returns the region names in order.
func (d *Dataset) Names() []string {
	names := make([]string, len(d.Regions))
	for i, r := range d.Regions {
		names[i] = r.Name
	}
	return names
}

// Span returns the earliest first day and the latest last day over all
// regions. Both are zero for a dataset without days.
func (d *Dataset) Span() (first, last time.Time) {
	for _, r := range d.Regions {
		if len(r.Cases) == 0 {
			continue
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if e := r.End(); last.IsZero() || e.After(last) {
			last = e
		}
	}
	return first, last
}

// Date returns UTC midnight of the calendar date of t as read in t's own
// location: 2020-11-01T00:30+01:00 is 2020-11-01.
func Date(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// dayIndex returns the number of days from start (a UTC midnight) to the
// calendar date of t.
func dayIndex(start, t time.Time) int {
	return daysBetween(start, Date(t))
}

// daysBetween returns b−a in whole days for two UTC midnights.
func daysBetween(a, b time.Time) int {
	return int(floorDiv(b.Unix()-a.Unix(), 86400))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
