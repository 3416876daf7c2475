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
	if (weekly || !chosen && campaigns > 1 && public) && (flagSet(fs, "from") || flagSet(fs, "to")) {
		// The weekly design never reads a study period: study new and
		// serve printed "every LHA's file must cover …" for days no LHA
		// was held to.
		return model.Design{}, usagef("leave out --from and --to: the weekly design trains on every week of each LHA's file whose outcome is known, "+
			"as of the file's last day, and each campaign reads the file again",
			"--from and --to set a study period, which the weekly design does not read")
	}
	if campaigns > 1 && flagSet(fs, "to") {
		fmt.Fprintf(env.Stdout, "Note: with --to %s every campaign trains on days up to %s only, however new the files the LHAs bring to later campaigns.\n",
			fs.Lookup("to").Value, fs.Lookup("to").Value)
	}
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
