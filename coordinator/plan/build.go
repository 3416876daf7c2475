package plan

import (
	"fmt"
	"io"
	"math"
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
	Preset   string
	Progress io.Writer
}

// Outbreak is one data set the table is measured on: synthetic, or public
// history (a national institute's published county series), never an
// LHA's own data.
type Outbreak struct {
	Name     string
	Data     *series.Dataset
	States   map[string]string
	From, To time.Time
}

// DefaultZs are the noise levels `go generate ./coordinator/plan` measures.
var DefaultZs = []float64{0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 3}

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
			data, _, err := synth.Generate(synth.Options{Areas: n, Start: start, Days: days, Seed: seed})
			if err != nil {
				return nil, err
			}
			states := map[string]string{}
			for _, r := range data.Regions {
				states[r.Name] = "synthetic"
			}
			out = append(out, Outbreak{Name: fmt.Sprintf("synthetic, %d areas, seed %d", n, seed), Data: data, States: states,
				From: start.AddDate(0, 0, 91), To: start.AddDate(0, 0, days-backtest.WeekDays-1)})
		}
	}
	return out, nil
}

// MaxRelativeWIS caps each measured relative WIS: beyond it the shared
// model is noise, and how much worse than no change it is tells a
// coordinator nothing more.
const MaxRelativeWIS = 10

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
	var names []string
	for _, ob := range o.Outbreaks {
		names = append(names, ob.Name)
	}
	t := &Table{Command: "go generate ./coordinator/plan", Design: preset, Rounds: d.Rounds, SampleRate: d.SampleRate,
		ClientsPerRound: d.ClientsPerRound, Clip: d.Clip, Accountant: d.Accountant, Source: strings.Join(names, "; ")}
	for _, every := range o.Everys {
		for _, z := range o.Zs {
			row := Row{Every: every, Z: z, Low: math.Inf(1), High: math.Inf(-1)}
			logSum := 0.0
			for _, ob := range o.Outbreaks {
				rel, err := measure(design, ob, every, z)
				if err != nil {
					return nil, err
				}
				rel = math.Min(rel, MaxRelativeWIS)
				logSum += math.Log(rel)
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

// measure backtests one outbreak at noise level z.
func measure(d backtest.Design, ob Outbreak, every int, z float64) (float64, error) {
	seed := uint64(1)
	bo := backtest.Options{Cases: ob.Data, AreaState: ob.States, From: ob.From, To: ob.To, Epsilon: math.Inf(1), Delta: 1e-5,
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
