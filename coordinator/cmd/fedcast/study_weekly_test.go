package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
)

// study new picks the weekly design for --preset weekly (needs --public)
// and for --campaigns without --preset when --public is given; without
// --public a continuing study says it falls back to the monthly design.
func TestStudyNewWeeklyDefault(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "public.csv")
	if err := os.WriteFile(pub, []byte("kind,name,state,population,date,cases\ntotal,national,,,2020-10-01,5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"study", "new", "--lhas", "3", "--epsilon", "2"}
	for _, c := range []struct {
		name     string
		args     []string
		code     int
		features string
		say      string
	}{
		{"weekly", []string{"--preset", "weekly", "--public", pub}, 0, "weekly-total", "Design weekly"},
		{"weekly without public", []string{"--preset", "weekly"}, 2, "", "--preset weekly reads the public national and state case totals"},
		{"weekly-trend", []string{"--preset", "weekly-trend", "--public", pub}, 0, "weekly-total", "Design weekly-trend"},
		{"weekly-trend without public", []string{"--preset", "weekly-trend"}, 2, "", "--preset weekly-trend reads the public national and state case totals"},
		{"campaigns with public", []string{"--campaigns", "3", "--every", "1h", "--public", pub}, 0, "weekly-total", "Design weekly"},
		{"campaigns without public", []string{"--campaigns", "3", "--every", "1h"}, 0, "log-change", "Without them this study uses the monthly design"},
		{"campaigns, preset default", []string{"--campaigns", "3", "--every", "1h", "--public", pub, "--preset", "default"}, 0, "log-change", "Design default"},
		{"one campaign with public", []string{"--public", pub}, 0, "log-change", "Design default"},
		// The weekly design reads no study period: study new printed "every
		// LHA's file must cover …" for days nobody was held to.
		{"weekly with --from/--to", []string{"--preset", "weekly", "--public", pub, "--from", "2020-10-01", "--to", "2020-12-31"}, 2, "",
			"--from and --to set a study period, which the weekly design does not read"},
		{"campaigns with public and --to", []string{"--campaigns", "3", "--every", "1h", "--public", pub, "--to", "2020-12-31"}, 2, "",
			"hint: leave out --from and --to"},
		{"monthly campaigns with --to", []string{"--campaigns", "3", "--every", "1h", "--to", "2020-12-31"}, 0, "log-change",
			"Note: with --to 2020-12-31 every campaign trains on days up to 2020-12-31 only"},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		code, stdout, errs := fedcast(t, append(append(append([]string{}, base...), "--out", out), c.args...)...)
		if code != c.code || !strings.Contains(stdout+errs, c.say) {
			t.Errorf("%s: exit %d, want %d saying %q:\n%s%s", c.name, code, c.code, c.say, stdout, errs)
			continue
		}
		if code != 0 {
			continue
		}
		f, _, err := study.Load(out)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f.Features != c.features || (f.Weekly != nil) != (c.features == "weekly-total") {
			t.Errorf("%s: features %q, weekly %v", c.name, f.Features, f.Weekly)
		}
		if f.Weekly != nil && (f.Layers()[0] != f.Weekly.Inputs() || f.Smoothing != "trailing" || f.Public(1, false).Weekly == nil) {
			t.Errorf("%s: layers %v, smoothing %q", c.name, f.Layers(), f.Smoothing)
		}
		if trend := c.name == "weekly-trend"; f.Weekly != nil && (f.Weekly.Median == "network+state-trend" && f.Weekly.TrendOffHolidays) != trend {
			t.Errorf("%s: median %q, off holidays %v", c.name, f.Weekly.Median, f.Weekly.TrendOffHolidays)
		}
	}
}
