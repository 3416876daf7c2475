package main

import (
	"flag"
	"fmt"

	"github.com/fedcast/fedcast/shared/model"
)

// studyPreset returns the design `study new` writes (docs/deployment.md,
// "The weekly design in a live study"):
//   - --preset weekly: the weekly design (model.WeeklyDesign); it needs
//     --public, the file of national and state totals it reads; so does
//     --preset weekly-trend (model.WeeklyTrend, its state-trend median);
//   - no --preset, with --campaigns: the weekly design when --public is
//     given; without it, the monthly design (preset default), and it says
//     so in plain words;
//   - otherwise the named one-month preset (default, paper).
func studyPreset(env *Env, fs *flag.FlagSet, preset string, campaigns int) (model.Design, error) {
	public := fs.Lookup("public").Value.String() != ""
	chosen := flagSet(fs, "preset")
	weekly := preset == "weekly" || preset == "weekly-trend"
	switch {
	case weekly && !public:
		return model.Design{}, usagef("write the public file with 'fedcast data public --cases FILE --counties FILE --out public.csv', then add --public public.csv",
			"--preset %s reads the public national and state case totals: give them with --public FILE", preset)
	case weekly:
		return model.ReplayPreset(preset)
	case !chosen && campaigns > 1 && public:
		return model.ReplayPreset("weekly")
	case !chosen && campaigns > 1:
		fmt.Fprintln(env.Stdout, "Note: a continuing study uses the weekly design when it has the public national and state case totals (--public FILE, written by 'fedcast data public'). Without them this study uses the monthly design (--preset default).")
	}
	d, err := model.Preset(preset)
	if err != nil {
		return d, usagef("use --preset default, paper, lipschitz, weekly or weekly-trend", "%v", err)
	}
	return d, nil
}
