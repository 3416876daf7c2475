package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/series"
)

// runDataPublic is 'fedcast data public --cases FILE --counties FILE --out
// FILE': the public inputs file (forecast.ReadPublicFile's format) from
// published data: the national and state daily totals are the sums of
// --cases, overall and by the state column of --counties, and the area
// table is --counties' state and population.
func runDataPublic(env *Env, args []string) error {
	fs := newFlagSet(env, "data public", "data public --cases FILE --counties FILE --out FILE\n\n"+
		"Writes the public inputs file of a weekly study (national and state daily totals, each area's state and\n"+
		"population; docs/deployment.md, \"The public inputs file\"). Give it the published series of every area.")
	cases := fs.String("cases", "", "case CSV of every area (date,region,cases): its sums stand for the national and state totals")
	counties := fs.String("counties", "", "areas' public table county_id,name,state,population (as counties.csv)")
	out := fs.String("out", "", "public inputs file to write (never overwritten)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	const hint = "e.g. fedcast data public --cases cases.csv --counties counties.csv --out public.csv"
	if *cases == "" || *counties == "" || *out == "" {
		return usagef(hint, "--cases, --counties and --out are all required")
	}
	data, meta, err := readCasesCounties(env, *cases, *counties)
	if err != nil {
		return err
	}
	p, err := forecast.NewPublicInputs(data, meta.State, meta.Population)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := forecast.WritePublicFile(&b, p); err != nil {
		return err
	}
	// Readable by all (0644): it holds only published totals, and the
	// coordinator's web server or a colleague may need to read it.
	if err := writeNewMode(*out, b.Bytes(), 0o644); errors.Is(err, os.ErrExist) {
		return usagef("choose another --out", "%s exists: a public inputs file is never overwritten", *out)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s: national and %d state totals, %s … %s, %d areas (%d bytes). Declare it with: fedcast study new --preset weekly --public %s --public-source \"…\"\n",
		*out, len(p.States), p.Start.Format(time.DateOnly), p.Known.Format(time.DateOnly), len(p.AreaState), b.Len(), *out)
	return nil
}

// readCasesCounties reads a cases file and the counties file of its areas'
// states and populations (every area needs a state): backtest and data
// public.
func readCasesCounties(env *Env, cases, counties string) (*series.Dataset, *backtest.Counties, error) {
	data, err := readCases(env, cases, false, time.Time{}, time.Time{})
	if err != nil {
		return nil, nil, err
	}
	meta, err := backtest.ReadCounties(counties)
	if err != nil {
		return nil, nil, withHint(err)
	}
	if err := meta.Check(data, counties); err != nil {
		return nil, nil, err
	}
	return data, meta, nil
}
