package main

import (
	"context"
	"fmt"
	"os"

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
	fs := newFlagSet(env, "forecast", "forecast --model FILE --data FILE [--public FILE] [--hub FILE] [--issued FILE] [--publish-epsilon E [--publish-delta D]]")
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
	if err := writeGuarded(env, *m.Study, data, pub, m.Weights, *hubOut, *issued); err != nil {
		return err
	}
	return pf.run(env, data, *dataPath, *hubOut, *m.Study, m.Weights, privacy.NewSecureRand())
}
