package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	fs         *flag.FlagSet
	eps, delta *float64
	limit      *float64
	hub, store *string
}

func addPublishFlags(fs *flag.FlagSet) *publishFlags {
	return &publishFlags{
		fs:    fs,
		eps:   fs.Float64("publish-epsilon", 0, "also produce the forecast to publish, with ε per person per year (one case); 0: none"),
		delta: fs.Float64("publish-delta", publish.DefaultDelta, "δ of the published forecast's guarantee"),
		limit: fs.Float64("publish-limit", 0, "this LHA's yearly limit of ε per person per year over all its publications: publish nothing that would exceed it (0: no limit)"),
		hub:   fs.String("publish-hub", "", "write the forecast to publish as a hub CSV here (default with --hub: FILE-published.csv), its DP marking beside it (.dp.json)"),
		store: fs.String("publish-store", "", "keep the published forecasts here, so that publishing the same day again gives the same numbers (default: the --data file's name + .published.json)"),
	}
}

// check returns a usage error for bad values (before the study is joined):
// an ε of 0 given on purpose, the other publish flags without an ε, an ε
// too small for any noise the sampler draws, a δ outside (0, 1).
func (p *publishFlags) check() error {
	set := map[string]bool{}
	p.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *p.eps == 0 {
		if set["publish-epsilon"] {
			return usagef("leave out --publish-epsilon to publish nothing, or give ε per person per year, e.g. --publish-epsilon 1",
				"--publish-epsilon 0: nothing would be published")
		}
		for _, name := range []string{"publish-hub", "publish-store", "publish-delta", "publish-limit"} {
			if set[name] {
				return usagef("add --publish-epsilon E (ε per person per year, e.g. 1), or leave out --"+name,
					"--%s needs --publish-epsilon: nothing is published without it", name)
			}
		}
		return nil
	}
	if !(*p.eps > 0) || math.IsInf(*p.eps, 0) {
		return usagef("e.g. --publish-epsilon 1", "--publish-epsilon %v: write a number above 0", *p.eps)
	}
	if err := privacy.CheckDelta(*p.delta); err != nil {
		return usagef("e.g. --publish-delta 1e-6", "--publish-delta %v: write a number between 0 and 1", *p.delta)
	}
	if set["publish-limit"] && (!(*p.limit > 0) || math.IsInf(*p.limit, 0)) {
		return usagef("e.g. --publish-limit 1, or leave it out for no limit", "--publish-limit %v: write a number above 0", *p.limit)
	}
	// Every forecaster published with is 1-Lipschitz, so its sensitivity is
	// at most the public model's: if that calibrates, so does the study's.
	if _, err := publish.Calibrate(publish.PublicForecaster().Sensitivity(), *p.eps, *p.delta); err != nil {
		return usagef("choose a larger ε, e.g. --publish-epsilon 0.1 or more", "%s", forPeople(err.Error()))
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
	store, storePath, err := p.openStore(env, data, dataPath)
	if err != nil {
		return err
	}
	ps, mark, err := store.PublishAll(data, f, *p.eps, *p.delta, rng)
	if err != nil {
		return err
	}
	mark = mark.ForModel(sha)
	if l := *p.limit; l > 0 && mark.EpsilonPerPersonYear > l*(1+1e-9) {
		return usagef("publish with a smaller --publish-epsilon, or raise --publish-limit if you mean to",
			"publishing now would take one person's ε to %.3g this year (%s with this one), above your --publish-limit %g: nothing was published, and %s is unchanged",
			mark.EpsilonPerPersonYear, plural(len(store.Records), "publication"), l, storePath)
	}
	out := env.Stdout
	if s := weakPublishEpsilon(*p.eps); s != "" {
		fmt.Fprintln(out, "warning: "+s)
	}
	if sha == "" {
		fmt.Fprintln(out, "note: this study's model is not Lipschitz-bounded, so the forecast to publish comes from a public \"no change\" model (last week's level) with privacy noise, not from the study's model. A study created with --preset lipschitz publishes its own model.")
	} else {
		fmt.Fprintf(out, "the forecast to publish comes from the study's released model %.12s… (each layer's spectral norm at most 1)\n", sha)
	}
	if short := shortAreas(data, f.Days()); short != "" {
		fmt.Fprintf(out, "note: %s, fewer than the %d days the forecast to publish reads: the days before it read as 0 cases, so its forecast leans low\n", short, f.Days())
	}
	fmt.Fprintln(out, "forecast to publish (average new cases per day over the next 7 days, with privacy noise; not the guarded forecast above, whose choice reads your own counts):")
	for _, f := range ps {
		lo, hi, _ := f.Quantiles.Interval(0.95)
		again := ""
		if f.Again {
			again = " (published before: the same numbers)"
			if e := storedEpsilon(store, f); e != *p.eps {
				again = fmt.Sprintf(" (published before, at ε %g: the same numbers; --publish-epsilon %g applies to days not published yet)", e, *p.eps)
			}
		}
		fmt.Fprintf(out, "  %s: %s a day for %s … %s (95 %% range %s to %s)%s\n", f.Location, oneDecimal(f.Quantiles.Median()),
			f.ReferenceDate.AddDate(0, 0, 1).Format(time.DateOnly), f.TargetEndDate.Format(time.DateOnly), oneDecimal(lo), oneDecimal(hi), again)
	}
	if err := writeFileAtomic(storePath, store.Write); err != nil {
		return err
	}
	yearEps := mark.EpsilonPerPersonYear
	fmt.Fprintln(out, mark.Text())
	if l := *p.limit; l > 0 {
		fmt.Fprintf(out, "one person's ε this year from your publications: %.3g of your yearly limit %g\n", yearEps, l)
	}
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

// storeSuffix ends the name of the default store: the --data file's name
// and this.
const storeSuffix = ".published.json"

// openStore reads the store of published forecasts (--publish-store, or
// the --data file's name + storeSuffix) and says on env.Stderr how many
// earlier publications it counts. It refuses a store that holds none of
// data's areas (another LHA's or another file's store), and a default
// store that does not exist yet while another store lies beside it: a
// weekly file under a new name would otherwise start a new store, and the
// ε per person per year would miss the earlier weeks' publications.
func (p *publishFlags) openStore(env *Env, data *series.Dataset, dataPath string) (*publish.Store, string, error) {
	path := *p.store
	if path == "" {
		path = dataPath + storeSuffix
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			others, _ := filepath.Glob(filepath.Join(filepath.Dir(dataPath), "*"+storeSuffix))
			if len(others) > 0 {
				return nil, "", usagef(fmt.Sprintf("to count this publication with the earlier ones (and keep their numbers), add --publish-store %s; to start a new store on purpose, name it with --publish-store FILE", others[0]),
					"%s has no store of published forecasts yet (%s), but %s lies beside it: published from an earlier week's file?", dataPath, filepath.Base(path), strings.Join(others, ", "))
			}
		}
	}
	name := path
	if *p.store != "" {
		name = "--publish-store " + path
	}
	store, err := loadPublishStore(path, name)
	if err != nil {
		return nil, "", err
	}
	if len(store.Records) == 0 {
		fmt.Fprintf(env.Stderr, "published forecasts are kept in %s (new: no earlier publications)\n", path)
		return store, path, nil
	}
	areas := map[string]bool{}
	for _, r := range store.Records {
		areas[r.Area] = true
	}
	for _, r := range data.Regions {
		if areas[r.Name] {
			fmt.Fprintf(env.Stderr, "published forecasts are kept in %s (%s so far, all counted in the ε per person per year)\n", path, plural(len(store.Records), "publication"))
			return store, path, nil
		}
	}
	names := slices.Sorted(maps.Keys(areas))
	if len(names) > 3 {
		names = append(names[:3], fmt.Sprintf("… (%d areas)", len(areas)))
	}
	return nil, "", usagef("give the store of this file's areas with --publish-store FILE (a new name starts a new store)",
		"the store of published forecasts %s holds areas %s, none of which is in %s: it is another LHA's or another file's store", path, strings.Join(names, ", "), dataPath)
}

// shortAreas names the areas of d with fewer than days days and says how
// many each has ("" when none).
func shortAreas(d *series.Dataset, days int) string {
	var short []string
	for _, r := range d.Regions {
		if n := len(r.Cases); n > 0 && n < days {
			short = append(short, fmt.Sprintf("%s has %s", r.Name, plural(n, "day")))
		}
	}
	if len(short) > 3 {
		short = append(short[:3], fmt.Sprintf("… (%d areas)", len(short)))
	}
	return strings.Join(short, ", ")
}

// storedEpsilon returns the ε per person per year that the stored
// publication f was drawn with.
func storedEpsilon(s *publish.Store, f publish.Published) float64 {
	day := f.ReferenceDate.Format(time.DateOnly)
	for _, r := range s.Records {
		if r.Area == f.Location && r.Origin == day {
			return r.Epsilon
		}
	}
	return 0
}

// weakPublishEpsilon is the warning for an ε per person per year above
// weakEpsilonAbove ("" up to it), as study new's for the lifetime ε.
func weakPublishEpsilon(eps float64) string {
	if eps <= weakEpsilonAbove {
		return ""
	}
	return fmt.Sprintf("--publish-epsilon %g is a weak promise: the published numbers may become up to e^ε times more likely with one case than without, and above ε = %d the noise hides little of any one case", eps, weakEpsilonAbove)
}

// loadPublishStore reads the store at path (empty when there is none);
// name is how errors call it.
func loadPublishStore(path, name string) (*publish.Store, error) {
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
		return nil, &usageError{msg: name + ": " + forPeople(err.Error()),
			hint: "give the file of published forecasts this LHA kept (--publish-store FILE, default: the --data file's name + " + storeSuffix + "); if it was lost, restore it from a backup: a new store draws new noise for days published before"}
	}
	return s, nil
}
