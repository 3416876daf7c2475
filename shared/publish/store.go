package publish

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// Record is one published forecast: the noised median and everything
// public needed to rebuild its range and to account for it.
type Record struct {
	Area      string    `json:"area"`
	Origin    string    `json:"origin"` // YYYY-MM-DD, the last reported day read
	Median    float64   `json:"median_log"`
	Kappa     float64   `json:"kappa"`
	Spread    float64   `json:"spread"`
	Mechanism Mechanism `json:"mechanism"`
	Epsilon   float64   `json:"epsilon_per_person_year"` // as asked when it was drawn
	Delta     float64   `json:"delta"`
}

// Quantiles returns the published quantiles of the next week's total.
func (r Record) Quantiles() forecast.Quantiles {
	return Range(r.Median, r.Spread, r.Mechanism.Sigma(), r.Kappa)
}

// Store keeps every published forecast of one LHA, so that publishing the
// same area and origin again returns the stored draw (a fresh draw would
// let a reader average the noise away), and so that the accountant sees
// every publication. It is kept next to the client's other files.
type Store struct {
	Records []Record `json:"publications"`
}

// ReadStore parses a store written by Write (an empty reader is an empty
// store).
func ReadStore(r io.Reader) (*Store, error) {
	s := &Store{}
	dec := json.NewDecoder(r)
	if err := dec.Decode(s); err != nil && err != io.EOF {
		return nil, fmt.Errorf("publish: the file of published forecasts is damaged: %w", err)
	}
	for i, r := range s.Records {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("publish: the file of published forecasts is damaged: publication %d (area %q, origin %q): %w", i+1, r.Area, r.Origin, err)
		}
	}
	return s, nil
}

// maxWeeks bounds the input weeks a stored mechanism may name.
const maxWeeks = 53

// check returns an error unless r's fields are usable.
func (r Record) check() error {
	if _, err := time.Parse(time.DateOnly, r.Origin); err != nil {
		return fmt.Errorf("origin is not a date (YYYY-MM-DD)")
	}
	m := r.Mechanism
	switch {
	case math.IsNaN(r.Median) || math.IsInf(r.Median, 0):
		return fmt.Errorf("median_log %v is not a number", r.Median)
	case !(r.Kappa > 0) || math.IsInf(r.Kappa, 0) || !(r.Spread >= 0) || math.IsInf(r.Spread, 0):
		return fmt.Errorf("kappa %v or spread %v out of range", r.Kappa, r.Spread)
	case !(m.Gamma > 0) || math.IsInf(m.Gamma, 0) || m.Sigma2 == 0 || m.Sigma2 > privacy.MaxDiscreteSigma2:
		return fmt.Errorf("mechanism (γ %v, σ² %d) out of range", m.Gamma, m.Sigma2)
	case len(m.Steps) == 0 || len(m.Steps) > maxWeeks:
		return fmt.Errorf("mechanism has %d weeks, want 1 to %d", len(m.Steps), maxWeeks)
	}
	for _, st := range m.Steps {
		if st < 1 {
			return fmt.Errorf("mechanism sensitivity %d below 1 step", st)
		}
	}
	return nil
}

// Write writes s as indented JSON.
func (s *Store) Write(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func (s *Store) find(area, origin string) (Record, bool) {
	for _, r := range s.Records {
		if r.Area == area && r.Origin == origin {
			return r, true
		}
	}
	return Record{}, false
}

// Publish returns the published forecast of area at origin from its daily
// counts (oldest first, origin last): the stored one when this area and
// origin were published before (stored = true), otherwise a new draw
// calibrated to (eps, delta) per person per year, which is recorded.
func (s *Store) Publish(area string, origin time.Time, f *Forecaster, daily []float64, eps, delta, spread float64, rng *rand.Rand) (rec Record, stored bool, err error) {
	day := origin.Format(time.DateOnly)
	if r, ok := s.find(area, day); ok {
		return r, true, nil
	}
	if err := f.Check(); err != nil {
		return Record{}, false, err
	}
	mech, err := Calibrate(f.Sensitivity(), eps, delta)
	if err != nil {
		return Record{}, false, err
	}
	m, err := f.Median(daily)
	if err != nil {
		return Record{}, false, err
	}
	mt, err := mech.Noise(m, rng)
	if err != nil {
		return Record{}, false, err
	}
	rec = Record{Area: area, Origin: day, Median: mt, Kappa: f.Kappa, Spread: spread, Mechanism: mech, Epsilon: eps, Delta: delta}
	s.Records = append(s.Records, rec)
	return rec, false, nil
}

// CaseEpsilon returns the largest ε at delta that one case of any area
// costs over every publication stored (publications of different areas
// never read the same case).
func (s *Store) CaseEpsilon(delta float64) (float64, error) {
	acc := map[string]*Accountant{}
	worst := 0.0
	for _, r := range s.Records {
		t, err := time.Parse(time.DateOnly, r.Origin)
		if err != nil {
			return 0, fmt.Errorf("publish: stored origin %q is not a date", r.Origin)
		}
		if acc[r.Area] == nil {
			acc[r.Area] = &Accountant{}
		}
		acc[r.Area].Add(t, r.Mechanism)
	}
	for _, a := range acc {
		e, _ := a.CaseEpsilon(delta)
		worst = max(worst, e)
	}
	return worst, nil
}

// PublicForecaster is the forecaster today's study designs publish with:
// they are not Lipschitz-bounded, so it uses the public network that
// outputs 0 (the published median is the last week's level) under the
// bound of a 1-Lipschitz network, which covers it.
func PublicForecaster() *Forecaster {
	net := nn.NewMLP(2, 8, 1)
	return &Forecaster{Kappa: DefaultKappa, Weeks: 3, Damping: 0.1, Net: net, Params: make([]float64, net.NumParams())}
}

// Published is one area's forecast to publish: the 7-day average of new
// cases per day over the 7 days after its last reported day.
type Published struct {
	forecast.HubForecast
	Again bool // published before: the stored draw
}

// PublishAll publishes every area of d with f at its last reported day
// (days before an area's series read as 0) and returns the forecasts and
// the marking (ε per person per year over every stored publication).
func (s *Store) PublishAll(d *series.Dataset, f *Forecaster, eps, delta float64, rng *rand.Rand) ([]Published, Marking, error) {
	var out []Published
	for _, r := range d.Regions {
		if len(r.Cases) == 0 {
			continue
		}
		origin := r.End()
		daily := r.Cases
		if n := f.Days(); len(daily) < n {
			daily = append(make([]float64, n-len(daily)), daily...)
		}
		rec, again, err := s.Publish(r.Name, origin, f, daily, eps, delta, DefaultSpread, rng)
		if err != nil {
			return nil, Marking{}, fmt.Errorf("publish: area %s: %w", r.Name, err)
		}
		q := rec.Quantiles()
		for i := range q {
			q[i] /= WeekDays
		}
		out = append(out, Published{HubForecast: forecast.HubForecast{Location: r.Name, ReferenceDate: origin,
			TargetEndDate: origin.AddDate(0, 0, WeekDays), Quantiles: q}, Again: again})
	}
	year, err := s.CaseEpsilon(delta)
	if err != nil {
		return nil, Marking{}, err
	}
	return out, Marking{DP: true, EpsilonPerPersonYear: year, Delta: delta, Covers: Covers}, nil
}

// HubForecasts returns the hub rows of ps.
func HubForecasts(ps []Published) []forecast.HubForecast {
	out := make([]forecast.HubForecast, len(ps))
	for i, p := range ps {
		out[i] = p.HubForecast
	}
	return out
}
