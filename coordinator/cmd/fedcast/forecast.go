package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

func init() {
	register(&command{
		Name:    "forecast",
		Summary: "forecast this week from a downloaded model and this LHA's file, offline (nothing is sent)",
		Run:     runForecast,
	})
}

// runForecast is `fedcast forecast --model FILE --data FILE [--hub FILE]`:
// the guarded forecast of every area with a model written by `fedcast
// client --model`. It opens no connection.
func runForecast(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "forecast", "forecast --model FILE --data FILE [--public FILE] [--hub FILE] [--issued FILE] [--publish-epsilon E [--publish-delta D] [--publish-store FILE] [--publish-limit E]]")
	modelPath := fs.String("model", "", "the released model, as written by fedcast client --model; required")
	dataPath := fs.String("data", "", "this LHA's case CSV (date,region,cases); required")
	hubOut := fs.String("hub", "", "write the headlined forecast of every area as a hub CSV here, and the method each area used to FILE.methods.csv")
	publicPath := fs.String("public", "", "the study's public inputs file (a weekly study's forecast reads it; its SHA-256 is checked against the model file's study)")
	issued := fs.String("issued", "", "keep the forecasts issued in this CSV file: the guard scores the model on them once their outcomes are in the data (optional)")
	pf := addPublishFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := pf.check(); err != nil {
		return err
	}
	if *modelPath == "" || *dataPath == "" {
		return usagef("e.g. fedcast forecast --model model.json --data my_cases.csv", "--model and --data are required")
	}
	f, err := os.Open(*modelPath)
	if err != nil {
		return err
	}
	m, err := session.ReadModelFile(f, *modelPath)
	f.Close()
	if err != nil {
		return err
	}
	data, err := series.ReadFile(*dataPath)
	if err != nil {
		return withHint(err)
	}
	fmt.Fprintf(env.Stderr, "model of %q after round %d (model %.12s…), read from %s; nothing is sent: this command opens no connection\n",
		m.Study.Name, m.Round, m.ModelSHA256, *modelPath)
	if session.IsWeekly(*m.Study) && *publicPath == "" {
		return usagef("add --public FILE (the file the study declares; the coordinator serves it at /api/public/SHA256)",
			"this model is of the weekly design, whose forecast reads the study's public inputs file")
	}
	pub, err := loadPublic(ctx, env, *m.Study, *publicPath, "")
	if err != nil {
		return err
	}
	if s := publicBehind(pub, data, *publicPath); s != "" {
		fmt.Fprintln(env.Stderr, "note: "+s)
	}
	if err := writeGuarded(env, *m.Study, data, pub, m.Weights, *hubOut, *issued); err != nil {
		return err
	}
	return pf.run(env, data, *dataPath, *hubOut, *m.Study, m.Weights, privacy.NewSecureRand())
}

// publicBehind says when the public totals file (path) ends before the
// last day of data: the weekly design then reads the totals of the days
// after it as no change ("" when it does not, or there is no file).
func publicBehind(pub *forecast.PublicInputs, data *series.Dataset, path string) string {
	if pub == nil || data == nil || len(data.Regions) == 0 {
		return ""
	}
	_, last := data.Span()
	last = series.Date(last)
	days := int(last.Sub(series.Date(pub.Known)).Hours() / 24)
	if days <= 0 {
		return ""
	}
	return fmt.Sprintf("the public totals file %s ends on %s, %s before the last day of your file (%s): the forecast reads the national and state totals of those days as no change. "+
		"The study declares this file by its hash, so a newer one cannot be used with this model (docs/deployment.md, \"Public inputs\").",
		path, pub.Known.Format(time.DateOnly), plural(days, "day"), last.Format(time.DateOnly))
}
