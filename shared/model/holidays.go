package model

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rickar/cal/v2"
	"github.com/rickar/cal/v2/de"
)

// Holidays are the public holidays of one German state, from the
// maintained calendar github.com/rickar/cal/v2 (its de package), not a
// hand-typed table. They are public and known in advance, so a forecast
// may read them for its target week.
type Holidays struct {
	// State is the state's name as given to NewHolidays.
	State string
	// Known is false when the calendar has no holidays for State (not a
	// German state, or none given): then no day is a holiday.
	Known bool
	list  []*cal.Holiday
	mu    sync.Mutex
	years map[int]map[time.Time]bool // computed on first use per year
}

// germanStates maps the state names of counties.csv (and their common
// English or ASCII spellings) to the calendar's holiday lists.
var germanStates = map[string][]*cal.Holiday{
	"baden-württemberg": de.HolidaysBW, "baden-wuerttemberg": de.HolidaysBW,
	"bayern": de.HolidaysBY, "bavaria": de.HolidaysBY,
	"berlin":      de.HolidaysBE,
	"brandenburg": de.HolidaysBB,
	"bremen":      de.HolidaysHB,
	"hamburg":     de.HolidaysHH,
	"hessen":      de.HolidaysHE, "hesse": de.HolidaysHE,
	"mecklenburg-vorpommern": de.HolidaysMV,
	"niedersachsen":          de.HolidaysNI, "lower saxony": de.HolidaysNI,
	"nordrhein-westfalen": de.HolidaysNW, "north rhine-westphalia": de.HolidaysNW,
	"rheinland-pfalz": de.HolidaysRP, "rhineland-palatinate": de.HolidaysRP,
	"saarland": de.HolidaysSL,
	"sachsen":  de.HolidaysSN, "saxony": de.HolidaysSN,
	"sachsen-anhalt": de.HolidaysST, "saxony-anhalt": de.HolidaysST,
	"schleswig-holstein": de.HolidaysSH,
	"thüringen":          de.HolidaysTH, "thueringen": de.HolidaysTH, "thuringia": de.HolidaysTH,
}

// NewHolidays returns the public holidays of the German state named state
// (as in counties.csv: "Bayern", "Nordrhein-Westfalen", …; case and
// surrounding spaces ignored). Any other name (a synthetic area's region,
// another country's, or none) gives a calendar without holidays whose
// Known is false; HolidayCheck says so in words.
func NewHolidays(state string) *Holidays {
	list, ok := germanStates[strings.ToLower(strings.TrimSpace(state))]
	return &Holidays{State: state, Known: ok, list: list}
}

// HolidayCheck returns an error naming state when NewHolidays has no
// holidays for it, for a caller that wants to tell its user.
func HolidayCheck(state string) error {
	if NewHolidays(state).Known {
		return nil
	}
	return fmt.Errorf("model: no holiday calendar for the state %q (the German states are known, as in counties.csv, e.g. \"Bayern\"); its areas' forecasts read no holidays", state)
}

// Is reports whether the calendar date of d (read in d's location) is a
// public holiday. It is safe for concurrent use.
func (h *Holidays) Is(d time.Time) bool {
	if h == nil || len(h.list) == 0 {
		return false
	}
	y, m, day := d.Date()
	h.mu.Lock()
	defer h.mu.Unlock()
	set, ok := h.years[y]
	if !ok {
		set = map[time.Time]bool{}
		for _, hol := range h.list {
			actual, _ := hol.Calc(y)
			if !actual.IsZero() {
				ay, am, ad := actual.Date()
				set[time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)] = true
			}
		}
		if h.years == nil {
			h.years = map[int]map[time.Time]bool{}
		}
		h.years[y] = set
	}
	return set[time.Date(y, m, day, 0, 0, 0, 0, time.UTC)]
}

// Share returns the fraction of the 7 days last−6 … last that are public
// holidays.
func (h *Holidays) Share(last time.Time) float64 {
	n := 0
	for i := -6; i <= 0; i++ {
		if h.Is(last.AddDate(0, 0, i)) {
			n++
		}
	}
	return float64(n) / 7
}
