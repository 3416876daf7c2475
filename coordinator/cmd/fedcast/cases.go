package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// readCases reads a whole case file for a command that replays or
// publishes all its areas (simulate, backtest, data public) and prints its
// warnings worded for whoever holds the file and chooses the period
// (printFileWarnings); with infos its other notices too. A problem in the
// file comes back as an error that carries the hint for fixing it.
func readCases(env *Env, path string, infos bool, from, to time.Time) (*series.Dataset, error) {
	d, err := series.ReadFile(path)
	if err != nil {
		return nil, withHint(err)
	}
	if infos {
		for _, n := range d.Notices {
			if n.Level == series.Info {
				printNotice(env.Stderr, n)
			}
		}
	}
	printFileWarnings(env.Stderr, d, from, to)
	return d, nil
}

// printFileWarnings writes d's warnings as they were read, for whoever
// holds the whole file and chooses the period (printWarningsAs).
func printFileWarnings(w io.Writer, d *series.Dataset, from, to time.Time) {
	printWarningsAs(w, d, from, to, func(n series.Notice) series.Notice { return n })
}

// printWarnings writes an LHA's warnings in the wording its browser page
// uses (series.Notice.ForLHA).
func printWarnings(w io.Writer, d *series.Dataset, from, to time.Time) {
	printWarningsAs(w, d, from, to, series.Notice.ForLHA)
}

// printWarningsAs writes d's warnings, each worded by reword; those about
// missing or unreported days only if they overlap from … to (a zero time
// leaves that end open).
func printWarningsAs(w io.Writer, d *series.Dataset, from, to time.Time, reword func(series.Notice) series.Notice) {
	for _, n := range d.Notices {
		if n.Level == series.Warning && !n.AboutDays() {
			printNotice(w, reword(n))
		}
	}
	for _, n := range d.DayNoticesIn(from, to) {
		printNotice(w, reword(n))
	}
}

// hintError is a file problem with what to do about it.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + "\n  how to fix it: " + e.hint }
func (e *hintError) Unwrap() error { return e.err }

// withHint adds the hint of a *series.ParseError or *series.CoverageError
// to the error's message.
func withHint(err error) error {
	var pe *series.ParseError
	if errors.As(err, &pe) && pe.Hint != "" {
		return &hintError{err: err, hint: pe.Hint}
	}
	var ce *series.CoverageError
	if errors.As(err, &ce) {
		return &hintError{err: err, hint: ce.Hint()}
	}
	return err
}

// printNotice writes a notice as "warning: …" or "note: …", with its hint
// on the next line.
func printNotice(w io.Writer, n series.Notice) {
	tag := "note"
	if n.Level == series.Warning {
		tag = "warning"
	}
	fmt.Fprintf(w, "%s: %s\n", tag, n.Message)
	if n.Hint != "" {
		what := "  what to do: "
		if n.Level == series.Info {
			what = "  "
		}
		fmt.Fprintf(w, "%s%s\n", what, n.Hint)
	}
}

// plural returns "1 area" or "3 areas".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, strings.TrimSuffix(one, "s"))
}
