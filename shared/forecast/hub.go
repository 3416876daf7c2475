package forecast

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// HubTarget is the target name fedcast writes: the 7-day average of daily
// reported cases (not a hub's weekly total).
const HubTarget = "7d avg inc case"

// HubColumns are the columns of a hub file, in order.
var HubColumns = []string{"reference_date", "target", "horizon", "target_end_date", "location", "output_type", "output_type_id", "value"}

// HubForecast is one area's quantile forecast for the hub file.
type HubForecast struct {
	Location      string    // the area id from the LHA's file
	ReferenceDate time.Time // the last reported day
	TargetEndDate time.Time // the day the forecast is for
	Quantiles     Quantiles
}

// Horizon is the number of days from ReferenceDate to TargetEndDate.
func (f HubForecast) Horizon() int {
	return int(math.Round(series.Date(f.TargetEndDate).Sub(series.Date(f.ReferenceDate)).Hours() / 24))
}

// ErrHub is wrapped by every error of ReadHub.
var ErrHub = errors.New("forecast: bad hub file")

// WriteHub writes forecasts as a hubverse-style CSV: a header, then one
// row per forecast and level (output_type "quantile", output_type_id the
// level as 0.025 … 0.975, value in cases per day with 3 decimals). Fields
// are quoted as CSV needs (encoding/csv).
func WriteHub(w io.Writer, fs []HubForecast) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(HubColumns); err != nil {
		return err
	}
	for _, f := range fs {
		if !f.Quantiles.Valid() {
			return fmt.Errorf("forecast: area %q: quantiles %v are not non-decreasing and non-negative", f.Location, f.Quantiles)
		}
		ref, end := series.Date(f.ReferenceDate).Format(time.DateOnly), series.Date(f.TargetEndDate).Format(time.DateOnly)
		h := strconv.Itoa(f.Horizon())
		for i, v := range f.Quantiles {
			rec := []string{ref, HubTarget, h, end, f.Location, "quantile", LevelStrings[i], strconv.FormatFloat(v, 'f', 3, 64)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadHub parses a file written by WriteHub (columns in any order, others
// ignored), checking every required column, ISO dates, the horizon, the
// target, the output type, that each forecast has each level exactly once,
// and that its quantiles are non-decreasing and non-negative. Errors name
// the line and column.
func ReadHub(r io.Reader) ([]HubForecast, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty file", ErrHub)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHub, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, c := range HubColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%w: line 1: no column %q (have %s)", ErrHub, c, strings.Join(header, ","))
		}
	}
	type key struct{ loc, ref, end string }
	var out []HubForecast
	index := map[key]int{}
	seen := map[key]*[NumLevels]bool{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrHub, err)
		}
		line, _ := cr.FieldPos(0) // only after a complete record: FieldPos panics after an error
		get := func(c string) string {
			if i := col[c]; i < len(rec) {
				return rec[i]
			}
			return ""
		}
		bad := func(c, why string) error {
			return fmt.Errorf("%w: line %d, column %s: %q %s", ErrHub, line, c, get(c), why)
		}
		ref, err := time.Parse(time.DateOnly, get("reference_date"))
		if err != nil {
			return nil, bad("reference_date", "is not a YYYY-MM-DD date")
		}
		end, err := time.Parse(time.DateOnly, get("target_end_date"))
		if err != nil {
			return nil, bad("target_end_date", "is not a YYYY-MM-DD date")
		}
		h, err := strconv.Atoi(get("horizon"))
		if err != nil || h != int(end.Sub(ref).Hours()/24) {
			return nil, bad("horizon", "is not the number of days from reference_date to target_end_date")
		}
		if get("target") != HubTarget {
			return nil, bad("target", "is not "+strconv.Quote(HubTarget))
		}
		if get("output_type") != "quantile" {
			return nil, bad("output_type", `is not "quantile"`)
		}
		if get("location") == "" {
			return nil, bad("location", "is empty")
		}
		level := -1
		for i, s := range LevelStrings {
			if get("output_type_id") == s {
				level = i
			}
		}
		if level < 0 {
			return nil, bad("output_type_id", "is not one of "+strings.Join(LevelStrings[:], ", "))
		}
		v, err := strconv.ParseFloat(get("value"), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, bad("value", "is not a non-negative number")
		}
		k := key{get("location"), get("reference_date"), get("target_end_date")}
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			seen[k] = new([NumLevels]bool)
			out = append(out, HubForecast{Location: k.loc, ReferenceDate: ref, TargetEndDate: end})
		}
		if seen[k][level] {
			return nil, bad("output_type_id", "appears twice for this location and dates")
		}
		seen[k][level] = true
		out[j].Quantiles[level] = v
	}
	for k, s := range seen {
		for i, ok := range s {
			if !ok {
				return nil, fmt.Errorf("%w: location %q, %s → %s: no row for level %s", ErrHub, k.loc, k.ref, k.end, LevelStrings[i])
			}
		}
		if q := out[index[k]].Quantiles; !q.Valid() {
			return nil, fmt.Errorf("%w: location %q, %s → %s: quantiles %v decrease with the level", ErrHub, k.loc, k.ref, k.end, q)
		}
	}
	return out, nil
}
