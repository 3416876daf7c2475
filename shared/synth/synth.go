package synth

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedcast/fedcast/shared/series"
)

// ErrOption reports an invalid Options field.
var ErrOption = errors.New("synth: invalid option")

// Options configures Generate. Every numeric field's zero value means its
// default; the No… switches turn a mechanism off.
type Options struct {
	// Areas is the number of areas. Defaults to 60.
	Areas int
	// Start is the first reported day (its calendar date). Defaults to
	// 2020-10-01.
	Start time.Time
	// Days is the number of reported days. Defaults to 92
	// (2020-10-01 … 2020-12-31, covering the paper's November study with
	// a month of margin on each side).
	Days int
	// Seed seeds the PCG generator; the same Options give the same data.
	// Zero is a seed like any other.
	Seed uint64
	// BurnIn is the number of days simulated before Start and not
	// reported, so the series starts mid-epidemic rather than from the
	// seeding. Defaults to 21.
	BurnIn int

	// R0 is the reproduction number before the intervention. Defaults
	// to 1.4.
	R0 float64
	// InterventionDay is the day (0 = Start) on which contact reductions
	// begin. Defaults to Days·45/92 (2020-11-15 with the default dates).
	InterventionDay int
	// InterventionEffect is the fraction by which transmission falls once
	// the intervention is in full force. Defaults to 0.4 (R 1.4 → 0.84).
	InterventionEffect float64
	// InterventionRamp is the number of days over which the reduction
	// phases in linearly. Defaults to 10.
	InterventionRamp int
	// NoIntervention keeps transmission at R0 throughout.
	NoIntervention bool

	// IncubationDays is the mean time from infection to infectiousness
	// (the E stage). Defaults to 4.
	IncubationDays float64
	// InfectiousDays is the mean infectious period (the I stage).
	// Defaults to 5.
	InfectiousDays float64
	// InitialPrevalence is the number of infectious people per 100,000
	// at the start of the burn-in, varied per area by a log-normal factor
	// (σ = 0.5). Defaults to 60.
	InitialPrevalence float64

	// Coupling is the share of an area's contacts made in other areas,
	// split among them by a gravity law (∝ population / (distance² +
	// (10 km)²)). Defaults to 0.1.
	Coupling float64
	// NoMobility makes areas independent (Coupling 0).
	NoMobility bool

	// ReportingRate is the probability that a new infection is ever
	// reported. Defaults to 0.35.
	ReportingRate float64
	// WeekdayReporting is, per weekday (index time.Weekday: Sunday
	// first), the fraction of detected-but-unreported cases the health
	// office reports that day; the rest wait for the next day. Defaults
	// to Sunday 0.45, Monday 1, Tuesday–Thursday 0.9, Friday 0.85,
	// Saturday 0.65: a Sunday dip and a Monday catch-up.
	WeekdayReporting [7]float64
	// MissedDayRate is the daily probability that an office of 100,000
	// or fewer inhabitants reports nothing (the backlog is reported
	// later); it falls as 100,000/population for larger areas. Defaults
	// to 0.03.
	MissedDayRate float64
	// NoMissedDays turns missed reporting days off.
	NoMissedDays bool

	// Realism switches, all off at zero (then the output is exactly what
	// it was before they existed). Real counties are less regular than
	// the model above; these make the synthetic data as hard to forecast.
	//
	// TimingSpread is the standard deviation, in days, of a per-area
	// shift of the intervention day: waves turn at different times in
	// different areas.
	TimingSpread float64
	// DetectionDrift is the daily standard deviation of a per-area random
	// walk of the log reporting rate (testing that expands or shrinks):
	// reported cases drift away from infections.
	DetectionDrift float64
	// DetectionTrend is the daily change of every area's log reporting
	// rate from Start on (−0.02: a fifth fewer infections reported
	// after 11 days, as when testing winds down).
	DetectionTrend float64
	// ReportingNoise is the log-scale standard deviation of a per-area,
	// per-day factor on the share of the backlog reported (overdispersed
	// reporting: batches, audits, late labs).
	ReportingNoise float64

	// PopulationMedian and PopulationSigma are the median and log-scale
	// spread of the log-normal area populations, which are then clipped
	// to [MinPopulation, MaxPopulation]. Default 150,000, 1.0, 20,000
	// and 3,000,000.
	PopulationMedian, PopulationSigma float64
	MinPopulation, MaxPopulation      float64
}

// DefaultOptions returns the defaults, filled in.
func DefaultOptions() Options {
	o, err := Options{}.withDefaults()
	if err != nil {
		panic(err) // the defaults are valid
	}
	return o
}

func (o Options) withDefaults() (Options, error) {
	if o.Areas == 0 {
		o.Areas = 60
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2020, 10, 1, 0, 0, 0, 0, time.UTC)
	}
	o.Start = series.Date(o.Start)
	if o.Days == 0 {
		o.Days = 92
	}
	if o.BurnIn == 0 {
		o.BurnIn = 21
	}
	if o.R0 == 0 {
		o.R0 = 1.4
	}
	if o.InterventionDay == 0 {
		o.InterventionDay = o.Days * 45 / 92
	}
	if o.InterventionEffect == 0 {
		o.InterventionEffect = 0.4
	}
	if o.InterventionRamp == 0 {
		o.InterventionRamp = 10
	}
	if o.IncubationDays == 0 {
		o.IncubationDays = 4
	}
	if o.InfectiousDays == 0 {
		o.InfectiousDays = 5
	}
	if o.InitialPrevalence == 0 {
		o.InitialPrevalence = 60
	}
	if o.Coupling == 0 {
		o.Coupling = 0.1
	}
	if o.ReportingRate == 0 {
		o.ReportingRate = 0.35
	}
	if o.WeekdayReporting == ([7]float64{}) {
		o.WeekdayReporting = [7]float64{0.45, 1, 0.9, 0.9, 0.9, 0.85, 0.65}
	}
	if o.MissedDayRate == 0 {
		o.MissedDayRate = 0.03
	}
	if o.PopulationMedian == 0 {
		o.PopulationMedian = 150000
	}
	if o.PopulationSigma == 0 {
		o.PopulationSigma = 1.0
	}
	if o.MinPopulation == 0 {
		o.MinPopulation = 20000
	}
	if o.MaxPopulation == 0 {
		o.MaxPopulation = 3e6
	}

	bad := func(name string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v (want %s)", ErrOption, name, v, want)
	}
	in := func(v, lo, hi float64) bool { return v >= lo && v <= hi } // false for NaN
	switch {
	case o.Areas < 1 || o.Areas > 100000:
		return o, bad("Areas", o.Areas, "1 … 100000")
	case o.Days < 1 || o.Days > series.MaxSpanDays:
		return o, bad("Days", o.Days, fmt.Sprintf("1 … %d", series.MaxSpanDays))
	case o.BurnIn < 0 || o.BurnIn > 3650:
		return o, bad("BurnIn", o.BurnIn, "0 … 3650")
	case !in(o.R0, 1e-3, 20):
		return o, bad("R0", o.R0, "in (0, 20]")
	case o.InterventionDay < 0:
		return o, bad("InterventionDay", o.InterventionDay, "≥ 0")
	case !in(o.InterventionEffect, 0, 1):
		return o, bad("InterventionEffect", o.InterventionEffect, "0 … 1")
	case o.InterventionRamp < 1:
		return o, bad("InterventionRamp", o.InterventionRamp, "≥ 1 day")
	case !in(o.IncubationDays, 0.5, 100):
		return o, bad("IncubationDays", o.IncubationDays, "0.5 … 100")
	case !in(o.InfectiousDays, 0.5, 100):
		return o, bad("InfectiousDays", o.InfectiousDays, "0.5 … 100")
	case !in(o.InitialPrevalence, 0, 1e5):
		return o, bad("InitialPrevalence", o.InitialPrevalence, "0 … 100000 per 100,000")
	case !in(o.Coupling, 0, 1):
		return o, bad("Coupling", o.Coupling, "0 … 1")
	case !in(o.ReportingRate, 1e-9, 1):
		return o, bad("ReportingRate", o.ReportingRate, "in (0, 1]")
	case !in(o.TimingSpread, 0, 60):
		return o, bad("TimingSpread", o.TimingSpread, "0 … 60 days")
	case !in(o.DetectionDrift, 0, 1):
		return o, bad("DetectionDrift", o.DetectionDrift, "0 … 1")
	case !in(o.DetectionTrend, -0.2, 0.2):
		return o, bad("DetectionTrend", o.DetectionTrend, "−0.2 … 0.2")
	case !in(o.ReportingNoise, 0, 3):
		return o, bad("ReportingNoise", o.ReportingNoise, "0 … 3")
	case !in(o.MissedDayRate, 0, 0.5):
		return o, bad("MissedDayRate", o.MissedDayRate, "0 … 0.5")
	case !in(o.PopulationMedian, 1, 1e9):
		return o, bad("PopulationMedian", o.PopulationMedian, "1 … 1e9")
	case !in(o.PopulationSigma, 0, 5):
		return o, bad("PopulationSigma", o.PopulationSigma, "0 … 5")
	case !in(o.MinPopulation, 1, 1e9) || !in(o.MaxPopulation, o.MinPopulation, 1e9):
		return o, bad("MinPopulation/MaxPopulation", [2]float64{o.MinPopulation, o.MaxPopulation}, "1 ≤ min ≤ max ≤ 1e9")
	}
	for d, f := range o.WeekdayReporting {
		if !in(f, 1e-3, 1) {
			return o, bad("WeekdayReporting["+time.Weekday(d).String()+"]", f, "in (0, 1]")
		}
	}
	return o, nil
}

// Area describes one synthetic area.
type Area struct {
	ID         string  // "S001", "S002", … (zero-padded, so IDs sort like indices)
	Name       string  // a made-up place name
	State      string  // compass quarter of the map: "North-West", …
	Population float64 // whole number of inhabitants
	X, Y       float64 // position on a 600 km × 600 km map, in km
}

// Generate simulates an outbreak and returns the reported daily cases of
// every area (regions named by Area.ID) and the areas themselves. The
// same Options always give the same result.
func Generate(opt Options) (*series.Dataset, []Area, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed_fedc_a57_0001))
	areas := makeAreas(o, rng)
	ep := newEpidemic(o, areas, rng)
	d := &series.Dataset{Regions: make([]*series.Region, len(areas))}
	for i, a := range areas {
		d.Regions[i] = &series.Region{Name: a.ID, Start: o.Start, Cases: make([]float64, o.Days)}
	}
	for t := -o.BurnIn; t < o.Days; t++ {
		ep.day(t, func(i int, reported float64) {
			if t >= 0 {
				d.Regions[i].Cases[t] = reported
			}
		})
	}
	return d, areas, nil
}

// gravity returns the row-normalised gravity weights of areas: w[i*n+j]
// is the share of area i's outside contacts made in area j.
func gravity(areas []Area) []float64 {
	n := len(areas)
	w := make([]float64, n*n)
	for i := range n {
		sum := 0.0
		for j := range n {
			if i == j {
				continue
			}
			dx, dy := areas[i].X-areas[j].X, areas[i].Y-areas[j].Y
			v := areas[j].Population / (dx*dx + dy*dy + 100)
			w[i*n+j] = v
			sum += v
		}
		if sum > 0 {
			for j := range n {
				w[i*n+j] /= sum
			}
		}
	}
	return w
}

// An epidemic is the stochastic SEIR state of every area and its
// reporting backlog. Every random draw comes from rng, in a fixed order,
// so that a seed gives one output.
type epidemic struct {
	o        Options
	areas    []Area
	rng      *rand.Rand
	coupling float64
	w        []float64 // gravity weights
	// Compartments and per-area transmission multipliers.
	S, E, I, pending, mult []float64
	// Realism: timing shifts of the intervention, drifting detection.
	shift     []int
	logDetect []float64
	pEI, pIR  float64
	prev      []float64 // prevalence at the start of the day
}

func newEpidemic(o Options, areas []Area, rng *rand.Rand) *epidemic {
	n := len(areas)
	ep := &epidemic{o: o, areas: areas, rng: rng, coupling: o.Coupling, w: gravity(areas),
		S: make([]float64, n), E: make([]float64, n), I: make([]float64, n), pending: make([]float64, n),
		mult: make([]float64, n), shift: make([]int, n), logDetect: make([]float64, n), prev: make([]float64, n),
		pEI: 1 - math.Exp(-1/o.IncubationDays), pIR: 1 - math.Exp(-1/o.InfectiousDays)}
	if o.NoMobility || n == 1 {
		ep.coupling = 0
	}
	for i, a := range areas {
		spread := math.Exp(0.5 * rng.NormFloat64())
		ep.I[i] = math.Min(math.Round(o.InitialPrevalence/1e5*a.Population*spread), a.Population)
		ep.E[i] = math.Min(math.Round(ep.I[i]*o.IncubationDays/o.InfectiousDays), a.Population-ep.I[i])
		ep.S[i] = a.Population - ep.I[i] - ep.E[i]
		ep.mult[i] = math.Exp(0.1*rng.NormFloat64() - 0.005)
	}
	// Drawn only when switched on, so that the default stream (and
	// output) is unchanged.
	if o.TimingSpread > 0 {
		for i := range ep.shift {
			ep.shift[i] = int(math.Round(o.TimingSpread * rng.NormFloat64()))
		}
	}
	return ep
}

// bin draws Binomial(k, p).
func (ep *epidemic) bin(k, p float64) float64 {
	switch {
	case k <= 0 || p <= 0:
		return 0
	case p >= 1:
		return k
	}
	return distuv.Binomial{N: k, P: p, Src: ep.rng}.Rand()
}

// r is the reproduction number on day t of an intervention starting on
// day start.
func (ep *epidemic) r(t, start int) float64 {
	R := ep.o.R0
	if !ep.o.NoIntervention {
		phase := math.Min(math.Max(float64(t-start+1)/float64(ep.o.InterventionRamp), 0), 1)
		R *= 1 - ep.o.InterventionEffect*phase
	}
	return R
}

// day advances every area by day t (relative to Start) and calls report
// with each area's reported cases.
func (ep *epidemic) day(t int, report func(i int, reported float64)) {
	o, n := ep.o, len(ep.areas)
	beta := ep.r(t, o.InterventionDay) / o.InfectiousDays
	for i, a := range ep.areas {
		ep.prev[i] = ep.I[i] / a.Population
	}
	weekday := o.Start.AddDate(0, 0, t).Weekday()
	for i := range ep.areas {
		mixed := ep.prev[i]
		if ep.coupling > 0 {
			out := 0.0
			for j := range n {
				out += ep.w[i*n+j] * ep.prev[j]
			}
			mixed = (1-ep.coupling)*ep.prev[i] + ep.coupling*out
		}
		beta := beta
		if ep.shift[i] != 0 {
			beta = ep.r(t, o.InterventionDay+ep.shift[i]) / o.InfectiousDays
		}
		lambda := beta * ep.mult[i] * mixed
		newE := ep.bin(ep.S[i], 1-math.Exp(-lambda))
		newI := ep.bin(ep.E[i], ep.pEI)
		newR := ep.bin(ep.I[i], ep.pIR)
		ep.S[i] -= newE
		ep.E[i] += newE - newI
		ep.I[i] += newI - newR
		report(i, ep.reported(i, t, weekday, newI))
	}
}

// reported thins area i's newly infectious newI on day t, then releases
// the backlog by weekday (Sunday dip, Monday catch-up).
func (ep *epidemic) reported(i, t int, weekday time.Weekday, newI float64) float64 {
	o, rng := ep.o, ep.rng
	rate := o.ReportingRate
	if o.DetectionDrift > 0 {
		ep.logDetect[i] += o.DetectionDrift * rng.NormFloat64()
	}
	if o.DetectionDrift > 0 || o.DetectionTrend != 0 {
		rate = math.Min(1, rate*math.Exp(ep.logDetect[i]+o.DetectionTrend*float64(max(t, 0))))
	}
	ep.pending[i] += ep.bin(newI, rate)
	missed := !o.NoMissedDays && rng.Float64() < o.MissedDayRate*math.Min(1, 1e5/ep.areas[i].Population)
	reported := 0.0
	if !missed {
		share := o.WeekdayReporting[weekday]
		if o.ReportingNoise > 0 {
			sd := o.ReportingNoise
			share = math.Min(1, share*math.Exp(sd*rng.NormFloat64()-sd*sd/2))
		}
		reported = ep.bin(ep.pending[i], share)
	}
	ep.pending[i] -= reported
	return reported
}

var (
	namePrefixes = []string{"Ash", "Bram", "Cal", "Dun", "Elm", "Fair", "Glen", "Hol", "Ivy", "Kings",
		"Lang", "Mar", "Nor", "Oak", "Pen", "Ros", "Stan", "Thorn", "Wes", "Yar"}
	nameSuffixes = []string{"ford", "by", "ton", "field", "wick", "ham", "stead", "more", "burg", "dale"}
)

// makeAreas draws populations, positions and names.
func makeAreas(o Options, rng *rand.Rand) []Area {
	width := max(3, len(strconv.Itoa(o.Areas)))
	names := make([]int, len(namePrefixes)*len(nameSuffixes))
	for i := range names {
		names[i] = i
	}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	areas := make([]Area, o.Areas)
	for i := range areas {
		pop := o.PopulationMedian * math.Exp(o.PopulationSigma*rng.NormFloat64())
		pop = math.Round(math.Min(math.Max(pop, o.MinPopulation), o.MaxPopulation))
		x, y := 600*rng.Float64(), 600*rng.Float64()
		k := names[i%len(names)]
		name := namePrefixes[k/len(nameSuffixes)] + nameSuffixes[k%len(nameSuffixes)]
		if i >= len(names) {
			name += " " + strconv.Itoa(i/len(names)+1)
		}
		state := "North"
		if y >= 300 {
			state = "South"
		}
		if x < 300 {
			state += "-West"
		} else {
			state += "-East"
		}
		areas[i] = Area{
			ID:         fmt.Sprintf("S%0*d", width, i+1),
			Name:       name,
			State:      state,
			Population: pop,
			X:          x,
			Y:          y,
		}
	}
	return areas
}

// WritePopulations writes the areas in the layout of the real
// counties.csv, "county_id,name,state,population", which
// series.ParsePopulations reads back.
func WritePopulations(w io.Writer, areas []Area) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"county_id", "name", "state", "population"}); err != nil {
		return err
	}
	for _, a := range areas {
		rec := []string{a.ID, a.Name, a.State, strconv.FormatFloat(a.Population, 'f', -1, 64)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
