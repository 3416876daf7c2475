package forecast

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

// The public inputs file (docs/deployment.md, "The public inputs file"):
// one CSV with the header
//
//	kind,name,state,population,date,cases
//
// and two kinds of rows:
//
//	total,national,,,2020-10-01,1234   the national daily total of a day
//	total,Bayern,,,2020-10-01,321      a state's daily total of a day
//	area,09162,Bayern,1484226,,        an area: its state and population
//
// A total row names "national" or a state; every total series covers the
// same consecutive days. An area row gives an area id exactly as in the
// LHAs' case files (leading zeros kept), its state (empty: none) and its
// population (empty: unknown). The file is public data: `fedcast data
// public` writes it from published series.

// PublicHeader is the header of the public inputs file.
var PublicHeader = []string{"kind", "name", "state", "population", "date", "cases"}

// ErrPublicFile is wrapped by every error reading a public inputs file.
var ErrPublicFile = errors.New("public inputs file")

// ReadPublicFile reads a public inputs file; errors name file, line and
// field. The result requires areas (Area refuses an area the file does not
// list).
func ReadPublicFile(r io.Reader, file string) (*PublicInputs, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(PublicHeader)
	cr.ReuseRecord = true
	bad := func(line int, format string, a ...any) error {
		return fmt.Errorf("%w %s, line %d: %s", ErrPublicFile, file, line, fmt.Sprintf(format, a...))
	}
	head, err := cr.Read()
	if err != nil {
		return nil, bad(1, "no header (want %s): %v", strings.Join(PublicHeader, ","), err)
	}
	if strings.Join(head, ",") != strings.Join(PublicHeader, ",") {
		return nil, bad(1, "header %q, want %q", strings.Join(head, ","), strings.Join(PublicHeader, ","))
	}
	days := map[string]map[time.Time]float64{}
	p := &PublicInputs{States: map[string][]float64{}, AreaState: map[string]string{}, Population: map[string]float64{}, RequireAreas: true}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, bad(pe.Line, "%v", pe.Err)
			}
			return nil, fmt.Errorf("%w %s: %v", ErrPublicFile, file, err)
		}
		line, _ := cr.FieldPos(0)
		switch rec[0] {
		case "total":
			if rec[1] == "" {
				return nil, bad(line, "field name: a total needs \"national\" or a state's name")
			}
			d, err := time.Parse(time.DateOnly, rec[4])
			if err != nil {
				return nil, bad(line, "field date: %q is not YYYY-MM-DD", rec[4])
			}
			v, err := strconv.ParseFloat(rec[5], 64)
			if err != nil || !(v >= 0) || v > 1e12 {
				return nil, bad(line, "field cases: %q is not a count (0 or more)", rec[5])
			}
			m := days[rec[1]]
			if m == nil {
				m = map[time.Time]float64{}
				days[rec[1]] = m
			}
			if _, dup := m[d]; dup {
				return nil, bad(line, "%s has %s twice", rec[1], rec[4])
			}
			m[d] = v
		case "area":
			if rec[1] == "" {
				return nil, bad(line, "field name: an area needs its id")
			}
			if _, dup := p.AreaState[rec[1]]; dup {
				return nil, bad(line, "area %q is listed twice", rec[1])
			}
			p.AreaState[rec[1]] = rec[2]
			if rec[3] != "" {
				v, err := strconv.ParseFloat(rec[3], 64)
				if err != nil || !(v > 0) || v > 1e10 {
					return nil, bad(line, "field population: %q is not a population above 0", rec[3])
				}
				p.Population[rec[1]] = v
			}
		default:
			return nil, bad(line, "field kind: %q, want \"total\" or \"area\"", rec[0])
		}
	}
	if err := p.fillTotals(days, file); err != nil {
		return nil, err
	}
	for a, s := range p.AreaState {
		if _, ok := p.States[s]; s != "" && !ok {
			return nil, fmt.Errorf("%w %s: area %q is in state %q, which has no total rows", ErrPublicFile, file, a, s)
		}
	}
	return p, nil
}

// fillTotals turns the total rows into p's series: "national" is required
// and every series must cover the same consecutive days.
func (p *PublicInputs) fillTotals(days map[string]map[time.Time]float64, file string) error {
	nat := days["national"]
	if len(nat) == 0 {
		return fmt.Errorf("%w %s: no national total (rows \"total,national,,,DATE,CASES\")", ErrPublicFile, file)
	}
	var first, last time.Time
	for d := range nat {
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	n := int(last.Sub(first).Hours()/24) + 1
	p.Start, p.Known = first, last
	for name, m := range days {
		if len(m) != n {
			return fmt.Errorf("%w %s: %s has %d days, want the national total's %d (%s … %s, every day)",
				ErrPublicFile, file, name, len(m), n, first.Format(time.DateOnly), last.Format(time.DateOnly))
		}
		v := make([]float64, n)
		for d, c := range m {
			i := int(d.Sub(first).Hours() / 24)
			if i < 0 || i >= n {
				return fmt.Errorf("%w %s: %s has %s, outside the national total's %s … %s",
					ErrPublicFile, file, name, d.Format(time.DateOnly), first.Format(time.DateOnly), last.Format(time.DateOnly))
			}
			v[i] = c
		}
		if name == "national" {
			p.National = v
		} else {
			p.States[name] = v
		}
	}
	return nil
}

// WritePublicFile writes p in the public inputs file's format (areas
// sorted by id; totals national first, then the states sorted).
func WritePublicFile(w io.Writer, p *PublicInputs) error {
	cw := csv.NewWriter(w)
	cw.Write(PublicHeader)
	names := append([]string{"national"}, p.StateNames()...)
	for _, name := range names {
		v := p.National
		if name != "national" {
			v = p.States[name]
		}
		for i, c := range v {
			cw.Write([]string{"total", name, "", "", p.Start.AddDate(0, 0, i).Format(time.DateOnly), strconv.FormatFloat(c, 'f', -1, 64)})
		}
	}
	areas := make([]string, 0, len(p.AreaState))
	for a := range p.AreaState {
		areas = append(areas, a)
	}
	for a := range p.Population {
		if _, ok := p.AreaState[a]; !ok {
			areas = append(areas, a)
		}
	}
	sort.Strings(areas)
	for _, a := range areas {
		pop := ""
		if v, ok := p.Population[a]; ok {
			pop = strconv.FormatFloat(v, 'f', -1, 64)
		}
		cw.Write([]string{"area", a, p.AreaState[a], pop, "", ""})
	}
	cw.Flush()
	return cw.Error()
}

// ErrAreaNotPublic is wrapped by Area's error for an area the public
// inputs file does not list.
var ErrAreaNotPublic = errors.New("area not in the public inputs")

var holidayCache sync.Map // state → *model.Holidays

// holidaysOf returns the (cached) public holidays of state.
func holidaysOf(state string) *model.Holidays {
	if h, ok := holidayCache.Load(state); ok {
		return h.(*model.Holidays)
	}
	h, _ := holidayCache.LoadOrStore(state, model.NewHolidays(state))
	return h.(*model.Holidays)
}

// Area returns area's view of the public inputs for the weekly design:
// the national total, its state's total, its state's holidays and its
// population. With RequireAreas (a public inputs file), an area the file
// does not list is an error naming it.
func (p *PublicInputs) Area(area string) (model.Public, error) {
	state, ok := p.AreaState[area]
	if !ok && p.RequireAreas {
		return model.Public{}, fmt.Errorf("%w: the area %q of your file is not listed in the public inputs file (its rows \"area,ID,STATE,POPULATION,,\"); check the area id (leading zeros count) or ask the coordinator for a public file that lists it",
			ErrAreaNotPublic, area)
	}
	pub := model.Public{National: p.NationalRegion(), Holidays: holidaysOf(state), Population: p.Population[area]}
	if st := p.StateRegion(state); st != nil {
		pub.State = st
	}
	return pub, nil
}

// WeeklyTraining returns the weekly design d's training windows of every
// area of own, as of pub.Known (x row-major n×Inputs, y the n targets).
func WeeklyTraining(d model.Design, own *series.Dataset, pub *PublicInputs) (x, y []float64, err error) {
	for _, r := range own.Regions {
		p, err := pub.Area(r.Name)
		if err != nil {
			return nil, nil, err
		}
		xr, yr := d.Weekly.Windows(r, p, pub.Known)
		x, y = append(x, xr...), append(y, yr...)
	}
	return x, y, nil
}

// Forecasts returns f's quantile forecasts of the next 7-day total of
// every area of own, as of pub.Known, in own's order.
func (f WeeklyForecaster) Forecasts(own *series.Dataset, pub *PublicInputs) ([]Quantiles, error) {
	out := make([]Quantiles, len(own.Regions))
	for i, r := range own.Regions {
		p, err := pub.Area(r.Name)
		if err != nil {
			return nil, err
		}
		out[i] = f.Forecast(r, p, pub.Known)
	}
	return out, nil
}
