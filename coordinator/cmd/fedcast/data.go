package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

func init() {
	register(&command{
		Name:    "data",
		Summary: "data tools: 'synth' writes a synthetic outbreak, 'check' validates a case CSV, 'public' writes a weekly study's public inputs file",
		Run:     runData,
	})
}

func runData(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("fedcast data synth -h, fedcast data check -h", "which tool? 'synth' or 'check'")
	}
	switch args[0] {
	case "synth":
		return runDataSynth(env, args[1:])
	case "check":
		return runDataCheck(env, args[1:])
	case "public":
		return runDataPublic(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.Stdout, "Usage: fedcast data synth [flags] | fedcast data check FILE [--json] | fedcast data public --cases FILE --counties FILE --out FILE")
		return nil
	}
	return usagef("use 'fedcast data synth' or 'fedcast data check'", "unknown data tool %q", args[0])
}

func runDataSynth(env *Env, args []string) error {
	fs := newFlagSet(env, "data synth", "data synth [--areas 60 --days 92 --start 2020-10-01 --seed 1 --out FILE --populations FILE]\n"+
		"       [--r0 1.4 --intervention-day D --intervention-effect 0.4 --no-intervention --prevalence 60]")
	areas := fs.Int("areas", 60, "number of areas (counties)")
	days := fs.Int("days", 92, "number of days")
	start := fs.String("start", "2020-10-01", "first day, YYYY-MM-DD")
	seed := fs.Uint64("seed", 1, "seed: the same seed gives the same data")
	out := fs.String("out", "", "case CSV to write (date,region,cases); empty: standard output")
	pops := fs.String("populations", "", "also write the areas' populations (county_id,name,state,population) here")
	var o synth.Options
	fs.Float64Var(&o.R0, "r0", 0, "reproduction number before the intervention (default 1.4)")
	fs.IntVar(&o.InterventionDay, "intervention-day", 0, "day (0 = --start) the contact reductions begin (default days·45/92)")
	fs.Float64Var(&o.InterventionEffect, "intervention-effect", 0, "fraction by which transmission falls (default 0.4)")
	fs.BoolVar(&o.NoIntervention, "no-intervention", false, "keep transmission at R0 throughout")
	fs.Float64Var(&o.InitialPrevalence, "prevalence", 0, "infectious people per 100,000 at the start of the burn-in (default 60)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"r0", o.R0}, {"intervention-effect", o.InterventionEffect}, {"prevalence", o.InitialPrevalence}, {"intervention-day", float64(o.InterventionDay)}} {
		if c.v < 0 {
			return usagef("", "--%s must not be negative, got %v", c.name, c.v)
		}
	}
	t0, err := parseDay(*start, "--start")
	if err != nil {
		return err
	}
	if *areas < 1 || *days < 1 {
		return usagef("", "--areas and --days must be at least 1")
	}
	o.Areas, o.Days, o.Start, o.Seed = *areas, *days, t0, *seed
	d, as, err := synth.Generate(o)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return series.Write(w, d) }
	if *out == "" {
		if err := write(env.Stdout); err != nil {
			return err
		}
	} else if err := writeFileAtomic(*out, write); err != nil {
		return err
	}
	if *pops != "" {
		if err := writeFileAtomic(*pops, func(w io.Writer) error { return synth.WritePopulations(w, as) }); err != nil {
			return err
		}
	}
	if *out != "" {
		fmt.Fprintf(env.Stderr, "wrote %d areas × %d days to %s\n", len(d.Regions), *days, *out)
	}
	return nil
}

// checkReport is the --json output of data check.
type checkReport struct {
	File       string        `json:"file"`
	OK         bool          `json:"ok"` // the file was read (warnings may remain)
	Areas      int           `json:"areas"`
	FirstDay   string        `json:"first_day,omitempty"`
	LastDay    string        `json:"last_day,omitempty"`
	Days       int           `json:"days"` // calendar days from first_day to last_day
	TotalCases float64       `json:"total_cases"`
	Columns    checkColumns  `json:"columns"`
	Warnings   []checkNotice `json:"warnings"` // notices of level warning
	Notices    []checkNotice `json:"notices"`  // all notices, info included
	AreaList   []checkArea   `json:"area_list"`
	Error      *checkProblem `json:"error,omitempty"`
}

type checkColumns struct {
	Date       string   `json:"date"`
	Area       string   `json:"area"` // "" when the whole file is one area
	Cases      string   `json:"cases"`
	CasesAre   string   `json:"cases_are"` // daily, running total, line list
	DateFormat string   `json:"date_format"`
	Encoding   string   `json:"encoding"`
	Ignored    []string `json:"ignored"`
}

type checkNotice struct {
	Code    string   `json:"code"`
	Level   string   `json:"level"`
	Message string   `json:"message"`
	Hint    string   `json:"hint,omitempty"`
	Line    int      `json:"line,omitempty"`
	Areas   []string `json:"areas,omitempty"`
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
}

type checkArea struct {
	Name       string  `json:"name"`
	FirstDay   string  `json:"first_day"`
	LastDay    string  `json:"last_day"`
	Days       int     `json:"days"`
	TotalCases float64 `json:"total_cases"`
}

type checkProblem struct {
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Value   string `json:"value,omitempty"`
	Hint    string `json:"hint,omitempty"`
}

// dataCheckUsage describes data check.
const dataCheckUsage = `data check FILE [--json]

Reads a case file as fedcast does (the browser page and fedcast client
use the same reader) and says what it found: areas, days, total cases,
which column was taken for what, and warnings with what to do.`

func runDataCheck(env *Env, args []string) error {
	fs := newFlagSet(env, "data check", dataCheckUsage)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := seeFlags(fs); err != nil {
		return err
	}
	// The file may come before or after the flags.
	var files []string
	for {
		if err := parseQuiet(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		return usagef("example: fedcast data check cases.csv", "give exactly one file")
	}
	path := files[0]
	if _, err := os.Stat(path); err != nil {
		return err
	}
	d, err := series.ReadFile(path)
	rep := checkReport{File: path, Warnings: []checkNotice{}, Notices: []checkNotice{}, AreaList: []checkArea{}}
	if err != nil {
		if !*asJSON {
			return withHint(err)
		}
		p := &checkProblem{Message: forPeople(err.Error())}
		var pe *series.ParseError
		if errors.As(err, &pe) {
			p.Line, p.Column, p.Field, p.Value, p.Hint = pe.Line, pe.Column, pe.Field, pe.Value, pe.Hint
		}
		rep.Error = p
		if werr := writeJSON(env, rep); werr != nil {
			return werr
		}
		return err
	}
	rep.OK = true
	rep.Areas = len(d.Regions)
	first, last := d.Span()
	if !first.IsZero() {
		rep.FirstDay, rep.LastDay = first.Format(time.DateOnly), last.Format(time.DateOnly)
		rep.Days = int(last.Sub(first)/series.Day) + 1
	}
	for _, r := range d.Regions {
		a := checkArea{Name: r.Name, FirstDay: r.Start.Format(time.DateOnly), LastDay: r.End().Format(time.DateOnly), Days: len(r.Cases)}
		for _, c := range r.Cases {
			a.TotalCases += c
		}
		rep.TotalCases += a.TotalCases
		rep.AreaList = append(rep.AreaList, a)
	}
	c := d.Columns
	rep.Columns = checkColumns{Date: c.Date, Area: c.Region, Cases: c.Cases, CasesAre: c.CasesAre,
		DateFormat: c.DateFormat, Encoding: c.Encoding, Ignored: append([]string{}, c.Ignored...)}
	for _, n := range d.Notices {
		cn := checkNotice{Code: n.Code, Level: string(n.Level), Message: n.Message, Hint: n.Hint, Line: n.Line, Areas: n.Areas}
		if !n.From.IsZero() {
			cn.From, cn.To = n.From.Format(time.DateOnly), n.To.Format(time.DateOnly)
		}
		rep.Notices = append(rep.Notices, cn)
		if n.Level == series.Warning {
			rep.Warnings = append(rep.Warnings, cn)
		}
	}
	if *asJSON {
		return writeJSON(env, rep)
	}

	w := env.Stdout
	verdict := "OK"
	switch n := len(rep.Warnings); {
	case n == 1:
		verdict = "read, with 1 warning: read it before training on the file"
	case n > 1:
		verdict = fmt.Sprintf("read, with %d warnings: read them before training on the file", n)
	}
	fmt.Fprintf(w, "%s: %s\n", path, verdict)
	fmt.Fprintf(w, "  %s, %s to %s (%s), %s cases in all (%s)\n", plural(rep.Areas, "area"), rep.FirstDay, rep.LastDay,
		plural(rep.Days, "day"), thousands(rep.TotalCases), casesWords(c.CasesAre, c.Cases))
	for _, n := range d.Notices {
		printNotice(w, n)
	}
	return nil
}

// thousands writes a whole number with commas: 332,776,793.
func thousands(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// casesWords says where the daily counts came from.
func casesWords(are, column string) string {
	switch are {
	case series.CasesRunning:
		return fmt.Sprintf("new cases per day as differences of the running total %q", column)
	case series.CasesLineList:
		return fmt.Sprintf("new cases per day added up from the case list's %q", column)
	}
	return fmt.Sprintf("new cases per day from %q", column)
}
