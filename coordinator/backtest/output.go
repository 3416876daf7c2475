package backtest

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
)

// HubTarget is the target of the backtest's hub files: the weekly total
// of reported cases.
const HubTarget = "wk inc case"

// HubFileName is the name of the hub file of origin t in --hub DIR.
func HubFileName(t time.Time, model string) string {
	return t.Format(time.DateOnly) + "-fedcast-" + model + ".csv"
}

// WriteHubFile writes one origin's forecasts: the columns of
// forecast.HubColumns, target "wk inc case", horizon 1, target_end_date
// t+7, location the area id as in the cases file, output_type "quantile",
// the seven levels, value the 7-day total.
func WriteHubFile(w io.Writer, t time.Time, areas []string, qs []forecast.Quantiles) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(forecast.HubColumns); err != nil {
		return err
	}
	ref, end := t.Format(time.DateOnly), t.AddDate(0, 0, WeekDays).Format(time.DateOnly)
	for a, loc := range areas {
		if !qs[a].Valid() {
			return fmt.Errorf("backtest: area %s, origin %s: quantiles %v are not non-decreasing and non-negative", loc, ref, qs[a])
		}
		for i, v := range qs[a] {
			rec := []string{ref, HubTarget, "1", end, loc, "quantile", forecast.LevelStrings[i], strconv.FormatFloat(v, 'f', 3, 64)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteHub writes one hub file per origin directly in dir (created if
// needed) and returns the files written.
func WriteHub(dir, model string, r *Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("backtest: --hub: %w", err)
	}
	var files []string
	for o, t := range r.Origins {
		name := filepath.Join(dir, HubFileName(t, model))
		f, err := os.Create(name)
		if err != nil {
			return files, fmt.Errorf("backtest: --hub: %w", err)
		}
		err = WriteHubFile(f, t, r.Areas, r.Forecasts[o])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("backtest: writing %s: %w", name, err)
		}
		files = append(files, name)
	}
	return files, nil
}

// Summary is the --json file.
type Summary struct {
	Design            string `json:"design"`
	From              string `json:"from"`
	To                string `json:"to"`
	Origins           int    `json:"origins"`
	LHAs              int    `json:"lhas"`
	Campaigns         int    `json:"campaigns"`
	RoundsPerCampaign int    `json:"rounds_per_campaign"`
	// FirstCampaignRounds is the first campaign's rounds when it differs
	// from RoundsPerCampaign (a warm start; --first-rounds).
	FirstCampaignRounds       int             `json:"first_campaign_rounds,omitempty"`
	NoiseMultiplier           float64         `json:"noise_multiplier"`
	EpsilonBudget             fl.JSONFloat    `json:"epsilon"`
	EpsilonSpent              fl.JSONFloat    `json:"epsilon_spent"`
	Delta                     float64         `json:"delta"`
	RelativeWIS               fl.JSONFloat    `json:"relative_wis"`
	RelativeMAE               fl.JSONFloat    `json:"relative_mae"`
	Coverage50                float64         `json:"coverage_50"`
	Coverage95                float64         `json:"coverage_95"`
	GeomeanQuarterRelativeWIS fl.JSONFloat    `json:"geomean_quarter_relative_wis"`
	WorstQuarter              WorstQuarter    `json:"worst_quarter"`
	Quarters                  []QuarterScores `json:"quarters"`
	PerOrigin                 []OriginScore   `json:"per_origin"`
	Fallbacks                 int             `json:"fallback_forecasts"`
	Seconds                   float64         `json:"seconds"`
	// UnscoredOrigins are the origins forecast (hub files written) but
	// not scored: their target week ends after the cases file.
	// UnscoredForecasts counts every (origin, area) forecast not scored,
	// theirs included. The scores above are of the rest.
	UnscoredOrigins   []string `json:"unscored_origins,omitempty"`
	UnscoredForecasts int      `json:"unscored_forecasts,omitempty"`
	// Published scores the published forecasts (--publish-epsilon); the
	// figures above stay the unpublished forecasts'.
	Published *PublishedSummary `json:"published,omitempty"`
}

// WorstQuarter is the quarter with the highest relative WIS.
type WorstQuarter struct {
	Quarter     string       `json:"quarter"`
	RelativeWIS fl.JSONFloat `json:"relative_wis"`
}

// Summarise builds the --json summary of a scored replay.
func Summarise(design string, r *Result, s *Scored) Summary {
	g, w := s.GeomeanQuarters()
	out := Summary{Design: design, Origins: len(r.Origins), LHAs: len(r.Areas), Campaigns: len(r.Campaigns),
		RoundsPerCampaign: r.Schedule.Rounds, NoiseMultiplier: r.Schedule.NoiseMultiplier,
		FirstCampaignRounds: r.Schedule.FirstRounds,
		EpsilonBudget:       fl.JSONFloat(r.Schedule.Epsilon), EpsilonSpent: fl.JSONFloat(r.EpsilonSpent()), Delta: r.Schedule.Delta,
		RelativeWIS: fl.JSONFloat(s.All.RelativeWIS), RelativeMAE: fl.JSONFloat(s.All.RelativeMAE), Coverage50: s.All.Coverage50, Coverage95: s.All.Coverage95,
		GeomeanQuarterRelativeWIS: fl.JSONFloat(g), WorstQuarter: WorstQuarter{Quarter: w.Quarter, RelativeWIS: fl.JSONFloat(w.RelativeWIS)},
		Quarters: s.Quarters, PerOrigin: s.PerOrigin, Fallbacks: r.Fallbacks, Seconds: math.Round(r.Seconds*100) / 100}
	for _, t := range s.UnscoredOrigins {
		out.UnscoredOrigins = append(out.UnscoredOrigins, t.Format(time.DateOnly))
	}
	out.UnscoredForecasts = s.UnscoredForecasts
	if len(r.Origins) > 0 {
		out.From, out.To = r.Origins[0].Format(time.DateOnly), r.Origins[len(r.Origins)-1].Format(time.DateOnly)
	}
	if out.FirstCampaignRounds == out.RoundsPerCampaign {
		out.FirstCampaignRounds = 0 // no warm start: the field is left out
	}
	return out
}

// WriteJSON writes s, indented. Scores of nothing (NaN) are written as 0;
// a ratio whose baseline error is 0 while the model's is not (the hub
// baseline forecast every outcome exactly, as where an outbreak has died
// out) is infinite and written as "inf".
func (s Summary) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s.finite(), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// finite returns s with NaN scores (nothing scored) replaced by 0:
// JSON has no NaN.
func (s Summary) finite() Summary {
	for _, v := range []*fl.JSONFloat{&s.RelativeWIS, &s.RelativeMAE, &s.GeomeanQuarterRelativeWIS, &s.WorstQuarter.RelativeWIS} {
		if math.IsNaN(float64(*v)) {
			*v = 0
		}
	}
	for _, v := range []*float64{&s.Coverage50, &s.Coverage95} {
		if math.IsNaN(*v) {
			*v = 0
		}
	}
	return s
}

// Markdown writes the per-quarter table.
func (s Summary) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| quarter | origins | relative WIS | relative MAE | 50 %% coverage | 95 %% coverage |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|\n")
	for _, q := range s.Quarters {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", q.Quarter, q.Origins, q.RelativeWIS, q.RelativeMAE, q.Coverage50, q.Coverage95)
	}
	fmt.Fprintf(&b, "| **all** | %d | **%.3f** | %.3f | %.3f | %.3f |\n", s.Origins-len(s.UnscoredOrigins), s.RelativeWIS, s.RelativeMAE, s.Coverage50, s.Coverage95)
	if note := s.UnscoredNote(); note != "" {
		fmt.Fprintf(&b, "\n%s\n", note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Headline is the one-paragraph description above the table.
func (s Summary) Headline() string {
	eps := "ε = ∞ (no noise)"
	if !math.IsInf(float64(s.EpsilonBudget), 1) {
		eps = fmt.Sprintf("lifetime ε = %g (spent %.3g), δ = %g", float64(s.EpsilonBudget), float64(s.EpsilonSpent), s.Delta)
	}
	rounds := count(s.RoundsPerCampaign, "round")
	if s.FirstCampaignRounds > 0 {
		rounds += fmt.Sprintf(" (the first %d)", s.FirstCampaignRounds)
	}
	origins := strconv.Itoa(s.Origins)
	if n := len(s.UnscoredOrigins); n > 0 {
		origins += fmt.Sprintf(", %d scored", s.Origins-n)
	}
	return fmt.Sprintf("Backtest of the %s design, origins %s … %s (%s), %s, %s of %s, %s. "+
		"Relative WIS against the hub baseline (1 = no change); geometric mean over quarters %.3f, worst quarter %s (%.3f).",
		s.Design, s.From, s.To, origins, count(s.LHAs, "LHA"), count(s.Campaigns, "campaign"), rounds, eps,
		s.GeomeanQuarterRelativeWIS, s.WorstQuarter.Quarter, s.WorstQuarter.RelativeWIS)
}

// count is n and the noun, "1 campaign" or "10 campaigns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// UnscoredNote says which forecasts were written but not scored, and
// why; "" when every forecast was scored.
func (s Summary) UnscoredNote() string {
	var parts []string
	switch n := len(s.UnscoredOrigins); {
	case n == 1:
		parts = append(parts, fmt.Sprintf("Not scored: the origin %s (forecast, hub file written), whose target week ends after the last day of the cases file.",
			s.UnscoredOrigins[0]))
	case n > 1:
		parts = append(parts, fmt.Sprintf("Not scored: the %d origins %s (forecast, hub files written), whose target weeks end after the last day of the cases file.",
			n, strings.Join(s.UnscoredOrigins, ", ")))
	}
	if extra := s.UnscoredForecasts - len(s.UnscoredOrigins)*s.LHAs; extra > 0 {
		what := fmt.Sprintf("%d forecasts at the scored origins are not scored either: their areas' counts end before their target weeks do"+
			" (an area whose counts stop earlier than the others').", extra)
		if extra == 1 {
			what = "1 forecast at a scored origin is not scored either: its area's counts end before its target week does" +
				" (an area whose counts stop earlier than the others')."
		}
		parts = append(parts, what)
	}
	return strings.Join(parts, " ")
}

// ReadHubFile parses a hub file written by WriteHubFile, checking the
// columns (exactly forecast.HubColumns, in order), the target, horizon,
// dates, output type and levels, and that every location has each of the
// seven levels exactly once. It returns the origin and each location's
// quantiles (locations as written, leading zeros kept).
func ReadHubFile(r io.Reader) (time.Time, map[string]forecast.Quantiles, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("backtest: hub file: line 1: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(forecast.HubColumns, ",") {
		return time.Time{}, nil, fmt.Errorf("backtest: hub file: line 1: columns %q, want %q", header, forecast.HubColumns)
	}
	var origin time.Time
	out := map[string]forecast.Quantiles{}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return origin, nil, fmt.Errorf("backtest: hub file: %w", err)
		}
		line, _ := cr.FieldPos(0)
		ref, err1 := time.Parse(time.DateOnly, rec[0])
		end, err2 := time.Parse(time.DateOnly, rec[3])
		switch {
		case err1 != nil || err2 != nil || !end.Equal(ref.AddDate(0, 0, WeekDays)):
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: dates %s → %s are not an origin and the day 7 days later", line, rec[0], rec[3])
		case !origin.IsZero() && !ref.Equal(origin):
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: reference_date %s, the file's origin is %s", line, rec[0], origin.Format(time.DateOnly))
		case rec[1] != HubTarget || rec[2] != "1" || rec[5] != "quantile":
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: target %q, horizon %q, output_type %q (want %q, 1, quantile)", line, rec[1], rec[2], rec[5], HubTarget)
		case rec[4] == "":
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: empty location", line)
		}
		origin = ref
		level := slices.Index(forecast.LevelStrings[:], rec[6])
		v, err := strconv.ParseFloat(rec[7], 64)
		if level < 0 || err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: level %q value %q (want one of the seven levels and a number ≥ 0)", line, rec[6], rec[7])
		}
		if seen[rec[4]]&(1<<level) != 0 {
			return origin, nil, fmt.Errorf("backtest: hub file: line %d: location %s has level %s twice", line, rec[4], rec[6])
		}
		seen[rec[4]] |= 1 << level
		q := out[rec[4]]
		q[level] = v
		out[rec[4]] = q
	}
	for loc, bits := range seen {
		if bits != 1<<forecast.NumLevels-1 {
			return origin, nil, fmt.Errorf("backtest: hub file: location %s lacks some of the seven levels", loc)
		}
	}
	return origin, out, nil
}
