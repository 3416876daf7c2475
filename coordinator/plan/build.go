//go:build !js

// Build measures the table by backtests; it is left out of WebAssembly
// builds (the Cloudflare Worker reads the table but never measures it, and
// the backtest would only make the Worker larger).

package plan

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/synth"
)

// BuildOptions say what Build measures.
type BuildOptions struct {
	// Everys are the schedules (days between campaigns).
	Everys []int
	// Zs are the noise levels c/m (0: no noise).
	Zs []float64
	// Outbreaks are the case series measured on.
	Outbreaks []Outbreak
	// Preset names the design (backtest.DesignFor; "" is
	// backtest.DefaultPreset, the design `fedcast backtest` runs).
	Preset string
	// Seeds are the seeds each outbreak is replayed with at each schedule
	// and noise level (each sets the network's start and the noise); the
	// outbreak's skill there is the geometric mean over them. Nil:
	// DefaultSeeds.
	Seeds    []uint64
	Progress io.Writer
}

// DefaultSeeds are the seeds `go generate ./coordinator/plan` replays each
// outbreak with. One replay's relative WIS moves with its seed (by about
// ±0.02 on the county history without noise, and by far more where the
// noise is large), and one seed per level once made the table promise
// better skill with more noise.
var DefaultSeeds = []uint64{1, 2, 3, 4, 5}

// Outbreak is one data set the table is measured on: synthetic, or public
// history (a national institute's published county series), never an
// LHA's own data.
type Outbreak struct {
	Name   string
	Data   *series.Dataset
	States map[string]string
	// Population maps an area to its public population, which the weekly
	// design reads (the level per 100,000); nil measures a design without
	// that input, not the one a study runs.
	Population map[string]float64
	From, To   time.Time
}

// DefaultZs are the noise levels `go generate ./coordinator/plan` measures:
// densest where studies of about 40 to 2,000 LHAs land (z 0.01 … 0.3), where
// the skill turns from the noiseless one to no better than no change.
var DefaultZs = []float64{0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1, 3}

// DefaultEverys are the schedules it measures.
var DefaultEverys = []int{28, 56}

// SyntheticOutbreaks are shared/synth outbreaks of each number of areas and
// seed: 240 days from 2020-01-01, origins from day 91 to the last day with
// a known week.
func SyntheticOutbreaks(areas []int, seeds []uint64) ([]Outbreak, error) {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	const days = 240
	var out []Outbreak
	for _, n := range areas {
		for _, seed := range seeds {
			data, areas, err := synth.Generate(synth.Options{Areas: n, Start: start, Days: days, Seed: seed})
			if err != nil {
				return nil, err
			}
			states, pop := map[string]string{}, map[string]float64{}
			for _, a := range areas {
				states[a.ID] = "synthetic"
				pop[a.ID] = a.Population
			}
			out = append(out, Outbreak{Name: fmt.Sprintf("synthetic, %d areas, seed %d", n, seed), Data: data, States: states, Population: pop,
				From: start.AddDate(0, 0, 91), To: start.AddDate(0, 0, days-backtest.WeekDays-1)})
		}
	}
	return out, nil
}

// Build measures the table: for each schedule and noise level, the
// relative WIS of the design's backtest on each outbreak; the
// expectation is their geometric mean, the range their smallest and
// largest value (each capped at MaxRelativeWIS).
func Build(o BuildOptions) (*Table, error) {
	preset := o.Preset
	if preset == "" {
		preset = backtest.DefaultPreset()
	}
	design, err := backtest.DesignFor(preset, 1)
	if err != nil {
		return nil, err
	}
	d := design.Recipe()
	seeds := o.Seeds
	if len(seeds) == 0 {
		seeds = DefaultSeeds
	}
	zs := append([]float64(nil), o.Zs...)
	sort.Float64s(zs)
	var names []string
	for _, ob := range o.Outbreaks {
		for _, r := range ob.Data.Regions {
			if !(ob.Population[r.Name] > 0) {
				return nil, fmt.Errorf("plan: %s: area %s has no population (the design reads each area's level per 100,000; without it the table would measure a design no study runs)", ob.Name, r.Name)
			}
		}
		names = append(names, ob.Name)
	}
	t := &Table{Command: "go generate ./coordinator/plan", Design: preset, Rounds: d.Rounds, SampleRate: d.SampleRate,
		ClientsPerRound: d.ClientsPerRound, Clip: d.Clip, Accountant: d.Accountant, Source: strings.Join(names, "; "),
		Seeds: seeds, Outbreaks: names}
	for _, every := range o.Everys {
		// skill[i][j]: outbreak i at noise level zs[j], made non-decreasing
		// in the noise.
		skill := make([][]float64, len(o.Outbreaks))
		for i, ob := range o.Outbreaks {
			for _, z := range zs {
				rel, err := measureSeeds(preset, ob, every, z, seeds)
				if err != nil {
					return nil, err
				}
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "plan: every %d days, z = %g, %s: relative WIS %.3f\n", every, z, ob.Name, rel)
				}
				skill[i] = append(skill[i], rel)
			}
			skill[i] = NonDecreasing(skill[i])
		}
		for j, z := range zs {
			row := Row{Every: every, Z: z, Low: math.Inf(1), High: math.Inf(-1)}
			logSum := 0.0
			for i := range o.Outbreaks {
				rel := skill[i][j]
				logSum += math.Log(rel)
				row.ByOutbreak = append(row.ByOutbreak, round3(rel))
				row.Low, row.High = math.Min(row.Low, rel), math.Max(row.High, rel)
			}
			row.Expected = round3(math.Exp(logSum / float64(len(o.Outbreaks))))
			row.Low, row.High = round3(row.Low), round3(row.High)
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "plan: every %d days, z = %g: relative WIS %.3f (%.3f … %.3f)\n", every, z, row.Expected, row.Low, row.High)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// measureSeeds is the geometric mean of measure over the seeds, each
// capped at MaxRelativeWIS. Each seed sets the design's random start and
// the noise, as `fedcast backtest --seed` does.
func measureSeeds(preset string, ob Outbreak, every int, z float64, seeds []uint64) (float64, error) {
	logSum := 0.0
	for _, seed := range seeds {
		d, err := backtest.DesignFor(preset, seed)
		if err != nil {
			return 0, err
		}
		rel, err := measure(d, ob, every, z, seed)
		if err != nil {
			return 0, err
		}
		logSum += math.Log(math.Min(rel, MaxRelativeWIS))
	}
	return math.Exp(logSum / float64(len(seeds))), nil
}

// measure backtests one outbreak at noise level z with one seed.
func measure(d backtest.Design, ob Outbreak, every int, z float64, seed uint64) (float64, error) {
	bo := backtest.Options{Cases: ob.Data, AreaState: ob.States, Population: ob.Population, From: ob.From, To: ob.To, Epsilon: math.Inf(1), Delta: 1e-5,
		Every: every, Design: d, Seed: &seed}
	if z > 0 {
		bo.NoiseMultiplier = z * float64(d.Recipe().ExpectedClients(len(ob.Data.Regions)))
	}
	res, err := backtest.Run(bo)
	if err != nil {
		return 0, fmt.Errorf("plan: %s, z = %g: %w", ob.Name, z, err)
	}
	sc, err := backtest.Score(res, ob.Data)
	if err != nil {
		return 0, err
	}
	return sc.All.RelativeWIS, nil
}

// Markdown writes the table for the docs.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| every (days) | noise per LHA z = c/m | expected relative WIS | range |\n|---:|---:|---:|---|\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %d | %g | %.3f | %.3f … %.3f |\n", r.Every, r.Z, r.Expected, r.Low, r.High)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
