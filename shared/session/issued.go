package session

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// Issued is a forecast an LHA issued: the area, the last day of its input
// and both forecasts made then (the shared model's, unclamped, and no
// change's). Kept on the LHA's computer (`--issued FILE`), it lets the
// guard score the model on the weeks it really forecast, once their
// outcomes are in the file.
type Issued struct {
	Area            string
	InputEnd        time.Time
	Model, NoChange float64
}

// IssuedColumns are the columns of an issued-forecasts file.
var IssuedColumns = []string{"location", "input_end", "model", "no_change"}

// ErrIssued is wrapped by every error of ReadIssued.
var ErrIssued = errors.New("session: bad issued-forecasts file")

// IssuedOf returns the forecasts of gs as issued.
func IssuedOf(gs []GuardedForecast) []Issued {
	out := make([]Issued, len(gs))
	for i, g := range gs {
		out[i] = Issued{Area: g.Forecast.Area, InputEnd: g.Forecast.InputEnd, Model: g.Model.Point, NoChange: g.NoChange}
	}
	return out
}

// MergeIssued returns old with add appended, one row per area and input
// day (a later row replaces an earlier one).
func MergeIssued(old, add []Issued) []Issued {
	type key struct {
		area string
		day  time.Time
	}
	at := map[key]int{}
	var out []Issued
	for _, r := range append(append([]Issued(nil), old...), add...) {
		k := key{r.Area, series.Date(r.InputEnd)}
		if i, ok := at[k]; ok {
			out[i] = r
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	return out
}

// IssuedOrigins turns issued forecasts into the guard's origins: those
// whose outcome (the 7-day average P days after the input's last day) is
// in data now.
func IssuedOrigins(st protocol.Study, data *series.Dataset, rows []Issued) []forecast.GuardOrigin {
	sm, err := series.ParseSmoothing(st.Smoothing)
	if err != nil {
		return nil
	}
	p := st.Horizon
	if p == 0 {
		p = series.DefaultHorizon
	}
	smoothed := map[string]forecast.Series{}
	for _, r := range data.Regions {
		smoothed[r.Name] = forecast.Smooth(r, sm)
	}
	var out []forecast.GuardOrigin
	for _, r := range rows {
		s, ok := smoothed[r.Area]
		if !ok {
			continue
		}
		if y := s.At(r.InputEnd.AddDate(0, 0, p)); !math.IsNaN(y) {
			out = append(out, forecast.GuardOrigin{Area: r.Area, InputEnd: series.Date(r.InputEnd), Model: r.Model, NoChange: r.NoChange, Actual: y})
		}
	}
	return out
}

// WriteIssued writes issued forecasts as CSV (IssuedColumns).
func WriteIssued(w io.Writer, rows []Issued) error {
	out := [][]string{IssuedColumns}
	for _, r := range rows {
		out = append(out, []string{r.Area, series.Date(r.InputEnd).Format(time.DateOnly),
			strconv.FormatFloat(r.Model, 'g', -1, 64), strconv.FormatFloat(r.NoChange, 'g', -1, 64)})
	}
	return writeCSV(w, out)
}

// ReadIssued reads a file WriteIssued wrote; name is the file's name for
// the errors, which give the line.
func ReadIssued(r io.Reader, name string) ([]Issued, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(IssuedColumns)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrIssued, name, err)
	}
	if len(recs) == 0 || fmt.Sprint(recs[0]) != fmt.Sprint(IssuedColumns) {
		return nil, fmt.Errorf("%w: %s: the first line must be %v", ErrIssued, name, IssuedColumns)
	}
	var out []Issued
	for i, rec := range recs[1:] {
		day, err := time.Parse(time.DateOnly, rec[1])
		m, err2 := strconv.ParseFloat(rec[2], 64)
		b, err3 := strconv.ParseFloat(rec[3], 64)
		if err := errors.Join(err, err2, err3); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %q: want location, YYYY-MM-DD and two numbers", ErrIssued, name, i+2, rec)
		}
		out = append(out, Issued{Area: rec[0], InputEnd: day, Model: m, NoChange: b})
	}
	return out, nil
}
