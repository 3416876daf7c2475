package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/series"
)

// publishFlags are the client's flags for a forecast to publish (issue 27).
type publishFlags struct {
	eps, delta *float64
	hub, store *string
}

func addPublishFlags(fs *flag.FlagSet) *publishFlags {
	return &publishFlags{
		eps:   fs.Float64("publish-epsilon", 0, "also produce the forecast to publish, with ε per person per year (one case); 0: none"),
		delta: fs.Float64("publish-delta", publish.DefaultDelta, "δ of the published forecast's guarantee"),
		hub:   fs.String("publish-hub", "", "write the forecast to publish as a hub CSV here (default with --hub: FILE-published.csv), its DP marking beside it (.dp.json)"),
		store: fs.String("publish-store", "", "keep the published forecasts here, so that publishing the same day again gives the same numbers (default: the --data file's name + .published.json)"),
	}
}

// check returns a usage error for bad values (before the study is joined).
func (p *publishFlags) check() error {
	if *p.eps == 0 {
		return nil
	}
	if !(*p.eps > 0) || math.IsInf(*p.eps, 0) {
		return usagef("e.g. --publish-epsilon 1", "--publish-epsilon %v: write a number above 0", *p.eps)
	}
	if err := privacy.CheckDelta(*p.delta); err != nil {
		return usagef("e.g. --publish-delta 1e-6", "--publish-delta %v: write a number between 0 and 1", *p.delta)
	}
	return nil
}

// run publishes every area of data (origin: its last reported day) with
// the study's released model when its design is Lipschitz-bounded
// (otherwise with the public no-change model, and says so), prints the
// text and writes the hub file and its marking. The study's lifetime
// client-level ε is added for the person's total.
func (p *publishFlags) run(env *Env, data *series.Dataset, dataPath, hubOut string, st protocol.Study, released []float64, rng *rand.Rand) error {
	if *p.eps == 0 {
		return nil
	}
	studyEps := st.Epsilon
	f, sha, err := publish.ForStudy(st, released)
	if err != nil {
		return err
	}
	storePath := *p.store
	if storePath == "" {
		storePath = dataPath + ".published.json"
	}
	store, err := loadPublishStore(storePath)
	if err != nil {
		return err
	}
	ps, mark, err := store.PublishAll(data, f, *p.eps, *p.delta, rng)
	if err != nil {
		return err
	}
	mark = mark.ForModel(sha)
	out := env.Stdout
	if sha == "" {
		fmt.Fprintln(out, "note: this study's model is not Lipschitz-bounded, so the forecast to publish comes from a public \"no change\" model (last week's level) with privacy noise, not from the study's model. A study created with --preset lipschitz publishes its own model.")
	} else {
		fmt.Fprintf(out, "the forecast to publish comes from the study's released model %.12s… (each layer's spectral norm at most 1)\n", sha)
	}
	fmt.Fprintln(out, "forecast to publish (average new cases per day over the next 7 days, with privacy noise; not the guarded forecast above, whose choice reads your own counts):")
	for _, f := range ps {
		lo, hi, _ := f.Quantiles.Interval(0.95)
		again := ""
		if f.Again {
			again = " (published before: the same numbers)"
		}
		fmt.Fprintf(out, "  %s: %s a day for %s … %s (95 %% range %s to %s)%s\n", f.Location, oneDecimal(f.Quantiles.Median()),
			f.ReferenceDate.AddDate(0, 0, 1).Format(time.DateOnly), f.TargetEndDate.Format(time.DateOnly), oneDecimal(lo), oneDecimal(hi), again)
	}
	if err := writeFileAtomic(storePath, store.Write); err != nil {
		return err
	}
	yearEps := mark.EpsilonPerPersonYear
	fmt.Fprintln(out, mark.Text())
	if !math.IsInf(studyEps, 0) && studyEps > 0 {
		fmt.Fprintf(out, "a person's total: the study's ε %.3g (the shared model) + the publications' ε %.3g = %.3g\n", studyEps, yearEps, studyEps+yearEps)
	}
	hubPath := *p.hub
	if hubPath == "" && hubOut != "" {
		hubPath = strings.TrimSuffix(hubOut, ".csv") + "-published.csv"
	}
	if hubPath == "" {
		return nil
	}
	if err := writeFileAtomic(hubPath, func(w io.Writer) error { return forecast.WriteHub(w, publish.HubForecasts(ps)) }); err != nil {
		return err
	}
	markPath := strings.TrimSuffix(hubPath, ".csv") + ".dp.json"
	if err := writeFileAtomic(markPath, func(w io.Writer) error {
		b, err := json.MarshalIndent(mark, "", "  ")
		if err == nil {
			_, err = w.Write(append(b, '\n'))
		}
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "wrote the forecast to publish to %s (marked as differentially private, ε %.3g per person per year, in %s)\n", hubPath, yearEps, markPath)
	return nil
}

func loadPublishStore(path string) (*publish.Store, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &publish.Store{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := publish.ReadStore(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
