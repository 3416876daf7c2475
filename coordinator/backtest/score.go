package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/series"
)

// BaselineOrigins is how many weekly origins before t the hub baseline's
// errors come from: t−56, t−49, …, t−7.
const BaselineOrigins = 8

// BaselineErrors returns the log-ratio errors log((y+1)/(p+1)) of the
// no-change forecast at the origins s = t−56, t−49, …, t−7 of every region
// of d, pooled, sorted: p is the 7-day average of days s−6 … s, y that of
// s+1 … s+7 (all known on t). Regions missing any of those days add
// nothing for that s.
func BaselineErrors(d *series.Dataset, t time.Time) []float64 {
	var errs []float64
	for k := BaselineOrigins; k >= 1; k-- {
		s := series.Date(t).AddDate(0, 0, -WeekDays*k)
		for _, r := range d.Regions {
			p := weekTotal(r, s.AddDate(0, 0, -WeekDays+1)) / WeekDays
			y := weekTotal(r, s.AddDate(0, 0, 1)) / WeekDays
			if !math.IsNaN(p) && !math.IsNaN(y) {
				errs = append(errs, math.Log((y+1)/(p+1)))
			}
		}
	}
	sort.Float64s(errs)
	return errs
}

// ShortBaseline returns the origins at which d does not reach back the
// 8 weeks (and the 6 days before them) the hub baseline's errors come
// from: their ranges pool the weeks there are.
func ShortBaseline(d *series.Dataset, origins []time.Time) []time.Time {
	first, _ := d.Span()
	var out []time.Time
	for _, t := range origins {
		if series.Date(t).AddDate(0, 0, -WeekDays*BaselineOrigins-WeekDays+1).Before(first) {
			out = append(out, t)
		}
	}
	return out
}

// Baseline is the hub baseline of a region at origin t, the 7-day total
// over t+1 … t+7, given the pooled sorted errors of BaselineErrors: the
// median is no change (the total of t−6 … t); the level τ is
// 7·((p+1)·exp(e_τ) − 1) clipped at 0, p the 7-day average of t−6 … t and
// e_τ the errors' empirical τ-quantile (linear interpolation between
// order statistics). Without errors every level is no change.
func Baseline(r *series.Region, t time.Time, errs []float64) forecast.Quantiles {
	last := weekTotal(r, series.Date(t).AddDate(0, 0, -WeekDays+1))
	if math.IsNaN(last) {
		last = 0
	}
	p := last / WeekDays
	var q forecast.Quantiles
	for i, tau := range forecast.Levels {
		if len(errs) == 0 || tau == 0.5 {
			q[i] = last
			continue
		}
		q[i] = math.Max(0, WeekDays*((p+1)*math.Exp(empiricalQuantile(errs, tau))-1))
	}
	return q
}

// empiricalQuantile is the τ-quantile of sorted x, interpolating linearly
// between order statistics (position τ·(n−1)).
func empiricalQuantile(x []float64, tau float64) float64 {
	h := tau * float64(len(x)-1)
	lo := int(math.Floor(h))
	if lo >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[lo] + (h-float64(lo))*(x[lo+1]-x[lo])
}

// Quarter is "YYYYQn" of day t.
func Quarter(t time.Time) string {
	return fmt.Sprintf("%dQ%d", t.Year(), (int(t.Month())-1)/3+1)
}

// tally sums the scores of a set of (origin, area) forecasts.
type tally struct {
	n            int
	wis, wisBase float64
	ae, aeBase   float64
	in50, in95   int
	origins      map[time.Time]bool
}

func (s *tally) add(t time.Time, model, base forecast.Quantiles, y float64) {
	s.n++
	s.wis += forecast.WIS(model, y)
	s.wisBase += forecast.WIS(base, y)
	s.ae += math.Abs(y - model.Median())
	s.aeBase += math.Abs(y - base.Median())
	if forecast.Covered(model, 0.5, y) {
		s.in50++
	}
	if forecast.Covered(model, 0.95, y) {
		s.in95++
	}
	if s.origins == nil {
		s.origins = map[time.Time]bool{}
	}
	s.origins[t] = true
}

func ratio(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return a / b
}

func (s *tally) scores() Scores {
	if s.n == 0 {
		return Scores{RelativeWIS: math.NaN(), RelativeMAE: math.NaN(), Coverage50: math.NaN(), Coverage95: math.NaN()}
	}
	return Scores{Origins: len(s.origins), Forecasts: s.n, RelativeWIS: ratio(s.wis, s.wisBase), RelativeMAE: ratio(s.ae, s.aeBase),
		Coverage50: float64(s.in50) / float64(s.n), Coverage95: float64(s.in95) / float64(s.n)}
}

// Scores are the scores of a set of forecasts against the hub baseline.
type Scores struct {
	Origins     int     `json:"origins"`
	Forecasts   int     `json:"-"`
	RelativeWIS float64 `json:"relative_wis"`
	RelativeMAE float64 `json:"relative_mae"`
	Coverage50  float64 `json:"coverage_50"`
	Coverage95  float64 `json:"coverage_95"`
}

// QuarterScores are the scores of one calendar quarter's origins.
type QuarterScores struct {
	Quarter string `json:"quarter"`
	Scores
}

// OriginScore is the relative WIS of one origin and the lifetime ε spent
// when it was forecast.
type OriginScore struct {
	Origin       string       `json:"origin"`
	RelativeWIS  float64      `json:"relative_wis"`
	EpsilonSpent fl.JSONFloat `json:"epsilon_spent"`
}

// scoresJSON is Scores as JSON: a relative score that is infinite (the
// baseline's error is 0 and the model's is not, as where an outbreak has
// died out) is written as "inf", as an infinite ε is: JSON has no
// infinity.
type scoresJSON struct {
	Origins     int          `json:"origins"`
	RelativeWIS fl.JSONFloat `json:"relative_wis"`
	RelativeMAE fl.JSONFloat `json:"relative_mae"`
	Coverage50  float64      `json:"coverage_50"`
	Coverage95  float64      `json:"coverage_95"`
}

func (s Scores) asJSON() scoresJSON {
	return scoresJSON{s.Origins, fl.JSONFloat(s.RelativeWIS), fl.JSONFloat(s.RelativeMAE), s.Coverage50, s.Coverage95}
}

func (j scoresJSON) scores() Scores {
	return Scores{Origins: j.Origins, RelativeWIS: float64(j.RelativeWIS), RelativeMAE: float64(j.RelativeMAE), Coverage50: j.Coverage50, Coverage95: j.Coverage95}
}

// MarshalJSON implements json.Marshaler (an infinite ratio as "inf").
func (s Scores) MarshalJSON() ([]byte, error) { return json.Marshal(s.asJSON()) }

// UnmarshalJSON implements json.Unmarshaler.
func (s *Scores) UnmarshalJSON(b []byte) error {
	var j scoresJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = j.scores()
	return nil
}

type quarterJSON struct {
	Quarter string `json:"quarter"`
	scoresJSON
}

// MarshalJSON implements json.Marshaler (an infinite ratio as "inf").
func (q QuarterScores) MarshalJSON() ([]byte, error) {
	return json.Marshal(quarterJSON{q.Quarter, q.Scores.asJSON()})
}

// UnmarshalJSON implements json.Unmarshaler.
func (q *QuarterScores) UnmarshalJSON(b []byte) error {
	var j quarterJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*q = QuarterScores{Quarter: j.Quarter, Scores: j.scoresJSON.scores()}
	return nil
}

type originJSON struct {
	Origin       string       `json:"origin"`
	RelativeWIS  fl.JSONFloat `json:"relative_wis"`
	EpsilonSpent fl.JSONFloat `json:"epsilon_spent"`
}

// MarshalJSON implements json.Marshaler (an infinite ratio as "inf").
func (o OriginScore) MarshalJSON() ([]byte, error) {
	return json.Marshal(originJSON{o.Origin, fl.JSONFloat(o.RelativeWIS), o.EpsilonSpent})
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *OriginScore) UnmarshalJSON(b []byte) error {
	var j originJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = OriginScore{Origin: j.Origin, RelativeWIS: float64(j.RelativeWIS), EpsilonSpent: j.EpsilonSpent}
	return nil
}

// Scored is a replay's scores: overall, per quarter, per origin.
type Scored struct {
	All       Scores
	Quarters  []QuarterScores
	PerOrigin []OriginScore
	// Baselines[o][a] is the hub baseline of area a at origin o.
	Baselines [][]forecast.Quantiles
	// UnscoredOrigins are the origins at which no area has counts for
	// the whole target week (it ends after the cases file): forecast,
	// written, not scored. UnscoredForecasts counts every (origin, area)
	// forecast not scored, those origins' included.
	UnscoredOrigins   []time.Time
	UnscoredForecasts int
}

// Score scores r's forecasts against the outcomes in cases (the final
// counts) and the hub baseline. Origins whose week is not yet in cases
// are not scored.
func Score(r *Result, cases *series.Dataset) (*Scored, error) {
	if len(cases.Regions) != len(r.Areas) {
		return nil, fmt.Errorf("backtest: score: %d areas in the file, %d in the replay", len(cases.Regions), len(r.Areas))
	}
	out := &Scored{}
	var all tally
	byQ := map[string]*tally{}
	for o, t := range r.Origins {
		errs := BaselineErrors(cases, t)
		var ot tally
		bases := make([]forecast.Quantiles, len(r.Areas))
		for a, reg := range cases.Regions {
			bases[a] = Baseline(reg, t, errs)
			y := weekTotal(reg, t.AddDate(0, 0, 1))
			if math.IsNaN(y) {
				out.UnscoredForecasts++
				continue
			}
			q := Quarter(t)
			if byQ[q] == nil {
				byQ[q] = &tally{}
			}
			for _, s := range []*tally{&all, &ot, byQ[q]} {
				s.add(t, r.Forecasts[o][a], bases[a], y)
			}
		}
		out.Baselines = append(out.Baselines, bases)
		if ot.n == 0 {
			out.UnscoredOrigins = append(out.UnscoredOrigins, t)
			continue
		}
		out.PerOrigin = append(out.PerOrigin, OriginScore{Origin: t.Format(time.DateOnly),
			RelativeWIS: ot.scores().RelativeWIS, EpsilonSpent: fl.JSONFloat(r.EpsilonAt[o])})
	}
	out.All = all.scores()
	qs := make([]string, 0, len(byQ))
	for q := range byQ {
		qs = append(qs, q)
	}
	slices.Sort(qs)
	for _, q := range qs {
		out.Quarters = append(out.Quarters, QuarterScores{Quarter: q, Scores: byQ[q].scores()})
	}
	return out, nil
}

// GeomeanQuarters is the geometric mean of the quarters' relative WIS and
// the worst quarter (NaN and "" without quarters).
func (s *Scored) GeomeanQuarters() (geomean float64, worst QuarterScores) {
	if len(s.Quarters) == 0 {
		return math.NaN(), QuarterScores{}
	}
	sum := 0.0
	worst = s.Quarters[0]
	for _, q := range s.Quarters {
		sum += math.Log(q.RelativeWIS)
		if q.RelativeWIS > worst.RelativeWIS {
			worst = q
		}
	}
	return math.Exp(sum / float64(len(s.Quarters))), worst
}
