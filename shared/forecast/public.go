package forecast

import (
	"fmt"
	"sort"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// PublicInputs is the public data a forecasting design may read besides an
// LHA's own series: the national and state totals of daily reported cases
// (in a live study, the series a national institute publishes), the public
// population and state of each area, and the public holidays of each state.
//
// Nothing in it comes from an LHA's private data, so a design may use it
// freely: it costs no privacy and is no pooling across LHAs. In
// `fedcast backtest` the totals are the sums of the cases file, overall and
// by the counties file's state column (final counts, not the counts as
// known at the time).
//
// A PublicInputs handed to a design is always cut to what was known on the
// day the design acts (a campaign's start, a forecast origin): Until. A
// design must not assume that any day after Known exists.
type PublicInputs struct {
	// Start is the date (UTC midnight) of index 0 of National and of
	// every series in States.
	Start time.Time
	// Known is the last day the totals cover (the day the design acts).
	Known time.Time
	// National is the daily reported cases summed over every area, from
	// Start to Known.
	National []float64
	// States maps a state's name, as in the counties file's state column,
	// to its daily reported cases (the sum over its areas), from Start to
	// Known.
	States map[string][]float64
	// AreaState maps an area id (as in the cases file, leading zeros kept)
	// to its state's name; "" or absent when unknown.
	AreaState map[string]string
	// Population maps an area id to its public population; absent when
	// unknown.
	Population map[string]float64
	// Holiday reports whether day is a public holiday in the named state
	// (nil: no holiday calendar). It may be asked about any day, also
	// after Known: holidays are fixed in advance (the target week's
	// holidays are a legitimate input).
	Holiday func(state string, day time.Time) bool
	// RequireAreas makes Area refuse an area AreaState does not list (a
	// live study's public inputs file); false in the backtest, where an
	// area without a state reads the national total only.
	RequireAreas bool
}

// NewPublicInputs sums d by day, overall and by state (areaState maps an
// area id to its state; areas without one count in the national total
// only). Known is the last day of any area. population may be nil.
func NewPublicInputs(d *series.Dataset, areaState map[string]string, population map[string]float64) (*PublicInputs, error) {
	if d == nil || len(d.Regions) == 0 {
		return nil, fmt.Errorf("forecast: public inputs: no areas")
	}
	first, last := d.Span()
	n := int(series.Date(last).Sub(series.Date(first)).Hours()/24) + 1
	p := &PublicInputs{Start: series.Date(first), Known: series.Date(last), National: make([]float64, n),
		States: map[string][]float64{}, AreaState: areaState, Population: population}
	for _, r := range d.Regions {
		off := r.Index(p.Start) * -1
		var st []float64
		if s := areaState[r.Name]; s != "" {
			if st = p.States[s]; st == nil {
				st = make([]float64, n)
				p.States[s] = st
			}
		}
		for i, v := range r.Cases {
			p.National[off+i] += v
			if st != nil {
				st[off+i] += v
			}
		}
	}
	return p, nil
}

// Until returns p cut to the days up to and including day (a shallow copy:
// the series are shared, resliced, never copied, so it is cheap to call at
// every origin). Days after p.Known stay unknown.
func (p *PublicInputs) Until(day time.Time) *PublicInputs {
	q := *p
	day = series.Date(day)
	if day.After(p.Known) {
		day = p.Known
	}
	q.Known = day
	n := int(day.Sub(p.Start).Hours()/24) + 1
	n = max(0, min(n, len(p.National)))
	q.National = p.National[:n:n]
	q.States = make(map[string][]float64, len(p.States))
	for s, v := range p.States {
		q.States[s] = v[:n:n]
	}
	return &q
}

// StateOf returns area's state ("" when unknown).
func (p *PublicInputs) StateOf(area string) string { return p.AreaState[area] }

// StateNames returns the states, sorted.
func (p *PublicInputs) StateNames() []string {
	names := make([]string, 0, len(p.States))
	for s := range p.States {
		names = append(names, s)
	}
	sort.Strings(names)
	return names
}

// NationalRegion returns the national total as a series.Region named
// "national" (shared slice: read only).
func (p *PublicInputs) NationalRegion() *series.Region {
	return &series.Region{Name: "national", Start: p.Start, Cases: p.National}
}

// StateRegion returns the named state's total as a series.Region, nil
// when the state is unknown (shared slice: read only).
func (p *PublicInputs) StateRegion(state string) *series.Region {
	v, ok := p.States[state]
	if !ok {
		return nil
	}
	return &series.Region{Name: state, Start: p.Start, Cases: v}
}
