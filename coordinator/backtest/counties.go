package backtest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fedcast/fedcast/shared/series"
)

// Counties is the public metadata of the areas: state and population.
type Counties struct {
	State      map[string]string
	Population map[string]float64
}

// ReadCounties reads a counties file (county_id,name,state,population, as
// ../shared/data/counties.csv): the population as series.ParsePopulations
// reads it, and the state column. Errors name the file, line and column.
func ReadCounties(path string) (*Counties, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("backtest: --counties: %w", err)
	}
	return ParseCounties(b, path)
}

// ParseCounties is ReadCounties on the file's bytes.
func ParseCounties(b []byte, file string) (*Counties, error) {
	pop, err := series.ParsePopulations(bytes.NewReader(b), file)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.Comma = separator(b)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("backtest: %s: line 1: %w", file, err)
	}
	id, st := -1, -1
	for i, h := range header {
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "county_id", "region", "id":
			id = i
		case "state":
			st = i
		}
	}
	if id < 0 || st < 0 {
		return nil, fmt.Errorf("backtest: %s: line 1: want the columns county_id and state (have %s): the first line names the columns, county_id,name,state,population as in counties.csv",
			file, strings.Join(header, string(cr.Comma)))
	}
	c := &Counties{State: map[string]string{}, Population: pop}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("backtest: %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		if id >= len(rec) || st >= len(rec) || strings.TrimSpace(rec[st]) == "" {
			return nil, fmt.Errorf("backtest: %s: line %d, column state: empty (every area needs its state for the state totals)", file, line)
		}
		c.State[strings.TrimSpace(rec[id])] = strings.TrimSpace(rec[st])
	}
	return c, nil
}

// separator is the counties file's field separator, as series reads the
// populations from it: the commonest of ',', ';' and tab on the first line
// (a spreadsheet saving "CSV" in German writes ';').
func separator(b []byte) rune {
	b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	comma, best := ',', bytes.Count(b, []byte{','})
	for _, c := range []rune{';', '\t'} {
		if n := bytes.Count(b, []byte(string(c))); n > best {
			comma, best = c, n
		}
	}
	return comma
}

// Check reports the first area of d without a state.
func (c *Counties) Check(d *series.Dataset, file string) error {
	var missing []string
	for _, r := range d.Regions {
		if c.State[r.Name] == "" {
			missing = append(missing, r.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("backtest: %d areas of the cases file are not in %s (first: %q): add a row with its state for each", len(missing), file, missing[0])
	}
	return nil
}
