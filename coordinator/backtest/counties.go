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
	named, st := -1, -1
	for i, h := range header {
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "county_id", "region", "id":
			if named < 0 {
				named = i
			}
		case "state":
			st = i
		}
	}
	var recs [][]string
	var lines []int
	for st >= 0 {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("backtest: %s: %w", file, err)
		}
		line, _ := cr.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, line)
	}
	id := idColumn(len(header), named, st, recs, pop)
	if id < 0 || st < 0 {
		return nil, fmt.Errorf("backtest: %s: line 1: want the columns county_id and state (have %s): the first line names the columns, county_id,name,state,population as in counties.csv",
			file, strings.Join(header, string(cr.Comma)))
	}
	c := &Counties{State: map[string]string{}, Population: pop}
	for i, rec := range recs {
		if id >= len(rec) || st >= len(rec) || strings.TrimSpace(rec[st]) == "" {
			return nil, fmt.Errorf("backtest: %s: line %d, column state: empty (every area needs its state for the state totals)", file, lines[i])
		}
		c.State[strings.TrimSpace(rec[id])] = strings.TrimSpace(rec[st])
	}
	return c, nil
}

// idColumn is the column of the area ids among n: the column whose cells
// are the ids the populations were read under (series.ParsePopulations
// accepts every name of an area column that the cases file may use, such
// as AGS or district), the column named county_id, region or id first; -1
// when none is. st, the state column, is never the ids'.
func idColumn(n, named, st int, recs [][]string, pop map[string]float64) int {
	holdsIDs := func(i int) bool {
		seen := make(map[string]bool, len(recs))
		for _, rec := range recs {
			if i >= len(rec) {
				return false
			}
			v := strings.TrimSpace(rec[i])
			if _, ok := pop[v]; !ok {
				return false
			}
			seen[v] = true
		}
		return len(seen) == len(pop)
	}
	if named >= 0 && holdsIDs(named) {
		return named
	}
	for i := range n {
		if i != named && i != st && holdsIDs(i) {
			return i
		}
	}
	return -1
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
	if len(missing) == 0 {
		return nil
	}
	err := fmt.Errorf("backtest: %d areas of the cases file are not in %s (first: %q): add a row with its state and population for each", len(missing), file, missing[0])
	// A spreadsheet that read the ids as numbers dropped their leading
	// zeros ("01001" became "1001") in one file and not the other.
	for id := range c.State {
		a, b := strings.TrimLeft(id, "0"), strings.TrimLeft(missing[0], "0")
		if id != missing[0] && a == b && a != "" {
			return fmt.Errorf("%w; %s has %q: the leading zeros of the ids were lost in one of the files (a spreadsheet that reads ids as numbers drops them): write the ids as text, the same in both files",
				err, file, id)
		}
	}
	return err
}
