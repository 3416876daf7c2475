// Package plan is fedcast's planner: from the number of LHAs, the lifetime
// budget (ε, δ) and the months a study runs, it chooses the campaign
// schedule and says what skill to expect (the relative WIS against the
// no-change forecast, with a range), warning when the shared model is
// expected to do worse than no change.
//
// The expectation is read from a table (table.json, embedded) measured by
// `go generate ./coordinator/plan` (Build): backtests of the design
// `fedcast backtest` runs by default, on synthetic outbreaks from
// shared/synth and the public county history, at a grid of noise levels;
// never on an LHA's data. The noise level that matters is z = c/m,
// the noise multiplier over the expected LHAs per round: the standard
// deviation of the noise on the averaged update, in units of the clip
// bound. For a plan, c is calibrated so that all campaigns of all months
// compose to the lifetime budget, and the table is interpolated at z
// (linearly in log z).
package plan

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

//go:generate go run ./gen -out table.json

//go:embed table.json
var tableJSON []byte

// Table is the measured skill of the default design by noise level.
type Table struct {
	// Command is how the table was made.
	Command string `json:"command"`
	// Design names the design measured (a `fedcast backtest --preset`);
	// the recipe fields below are its federated schedule.
	Design          string  `json:"design"`
	Rounds          int     `json:"rounds"`
	SampleRate      float64 `json:"sampling_rate,omitempty"`
	ClientsPerRound int     `json:"clients_per_round,omitempty"`
	Clip            float64 `json:"clip"`
	Accountant      string  `json:"accountant"`
	// Source describes the outbreaks (synthetic, seeds, areas).
	Source string `json:"source"`
	// Seeds are the seeds each outbreak was replayed with (absent: seed 1
	// only, the tables before seeds were averaged).
	Seeds []uint64 `json:"seeds,omitempty"`
	// Outbreaks name the outbreaks measured, in the order of each row's
	// ByOutbreak.
	Outbreaks []string `json:"outbreaks,omitempty"`
	Rows      []Row    `json:"rows"`
}

// Row is the skill at one schedule and noise level.
type Row struct {
	// Every is the days between campaign starts.
	Every int `json:"every_days"`
	// Z is c/m (0: no noise).
	Z float64 `json:"z"`
	// Expected is the geometric mean relative WIS over the outbreaks
	// measured, Low and High the smallest and largest. Each outbreak's
	// value is the geometric mean over the table's seeds, made
	// non-decreasing in z (NonDecreasing), so all three are too.
	Expected float64 `json:"expected_relative_wis"`
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	// ByOutbreak is each outbreak's value (Table.Outbreaks' order).
	ByOutbreak []float64 `json:"by_outbreak,omitempty"`
}

// Expectation writes the expected relative WIS and its range in words.
func (p Plan) Expectation() string {
	if p.Expected >= MaxRelativeWIS {
		return fmt.Sprintf("%g or more (the shared model is noise)", float64(MaxRelativeWIS))
	}
	return fmt.Sprintf("%.2f (range %.2f … %.2f)", p.Expected, p.Range[0], p.Range[1])
}

// Sentence says what the plan expects in words, with its warnings.
func (p Plan) Sentence() string {
	s := fmt.Sprintf("The planner's table expects relative WIS %s at this noise (%.3g per LHA) against the no-change forecast.", p.Expectation(), p.Parameters.NoisePerLHA)
	for _, w := range p.Warnings {
		s += " Warning: " + w + "."
	}
	return s
}

// Measured is one outbreak's relative WIS at a plan's noise level.
type Measured struct {
	Outbreak    string  `json:"outbreak"`
	RelativeWIS float64 `json:"relative_wis"`
}

// Embedded returns the table compiled into the binary.
func Embedded() (*Table, error) {
	var t Table
	if err := json.Unmarshal(tableJSON, &t); err != nil {
		return nil, fmt.Errorf("plan: the embedded table: %w", err)
	}
	if len(t.Rows) == 0 {
		return nil, errors.New("plan: the embedded table is empty")
	}
	return &t, nil
}

// Request is what the planner is asked.
type Request struct {
	LHAs    int
	Epsilon float64 // lifetime budget; +Inf: no noise
	Delta   float64
	Months  float64
}

// Parameters are the schedule the planner chooses.
type Parameters struct {
	Design          string  `json:"design"`
	EveryDays       int     `json:"every_days"`
	Campaigns       int     `json:"campaigns"`
	Rounds          int     `json:"rounds"`
	ExpectedClients int     `json:"expected_clients"`
	SampleRate      float64 `json:"sampling_rate"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	Clip            float64 `json:"clip"`
	Accountant      string  `json:"accountant"`
	// NoisePerLHA is z = c/m, the noise's standard deviation on the
	// averaged update in units of the clip bound.
	NoisePerLHA float64 `json:"noise_per_lha"`
}

// Plan is the planner's answer (the JSON of `fedcast plan --json`).
type Plan struct {
	Parameters Parameters `json:"parameters"`
	Expected   float64    `json:"expected_relative_wis"`
	Range      [2]float64 `json:"expected_relative_wis_range"`
	Warnings   []string   `json:"warnings"`
	// ByOutbreak is what the expectation rests on: each outbreak's
	// measured relative WIS at the plan's schedule and noise (the real
	// county history beside the synthetic outbreaks).
	ByOutbreak []Measured `json:"by_outbreak,omitempty"`
	// ToBeat, when the expected relative WIS is not below 1, says what
	// would bring it below (Make: LHAs, budget, months; Assess: LHAs
	// only, and only with every LHA in every round).
	ToBeat *ToBeat `json:"to_beat_no_change,omitempty"`
}

// ToBeat says what would make a plan expected to beat the no-change
// forecast (relative WIS below 1), one change at a time: the fewest LHAs
// with the same budget and months, the smallest lifetime budget with the
// same LHAs and months, or the longest study, in whole months, with the
// same LHAs and budget. A field is 0 when no value within reach does it
// (at most MaxHintLHAs LHAs, ε at most MaxHintEpsilon, 1 month at least).
type ToBeat struct {
	LHAs    int     `json:"lhas,omitempty"`
	Epsilon float64 `json:"epsilon,omitempty"`
	Months  int     `json:"months,omitempty"`
	// scheduleFixed: the hint is for a study's own schedule (Assess),
	// where only the LHAs were searched.
	scheduleFixed bool
}

// The limits of what ToBeat suggests.
const (
	MaxHintLHAs    = 100000
	MaxHintEpsilon = 100
)

// MaxRelativeWIS caps each measured relative WIS: beyond it the shared
// model is noise, and how much worse than no change it is tells a
// coordinator nothing more.
const MaxRelativeWIS = 10

// DaysPerMonth converts --months to days.
const DaysPerMonth = 30.44

// Make plans a deployment: for each schedule in the table (days between
// campaigns) it calibrates c for all campaigns of the months to the
// budget, reads the expected skill at z = c/m, and keeps the best.
func (t *Table) Make(r Request) (Plan, error) {
	switch {
	case r.LHAs < 1:
		return Plan{}, fmt.Errorf("plan: %d LHAs: a study needs at least 1", r.LHAs)
	case !(r.Months > 0) || r.Months > 600:
		return Plan{}, fmt.Errorf("plan: %v months: want a number of months above 0 and at most 600", r.Months)
	case !(r.Epsilon > 0):
		return Plan{}, fmt.Errorf("plan: ε = %v: want a budget above 0 (or inf)", r.Epsilon)
	}
	if !math.IsInf(r.Epsilon, 1) {
		if err := privacy.CheckEpsilon(r.Epsilon); err != nil {
			return Plan{}, fmt.Errorf("plan: %w", err)
		}
		if err := privacy.CheckDelta(r.Delta); err != nil {
			return Plan{}, fmt.Errorf("plan: %w", err)
		}
	}
	best, err := t.choose(r)
	if err != nil {
		return Plan{}, err
	}
	if best.Expected >= 1 {
		best.ToBeat = t.toBeat(r)
	}
	best.Warnings = warnings(r, best, t.maxZ(best.Parameters.EveryDays))
	return best, nil
}

// choose is Make's plan without warnings: the schedule that reads best.
func (t *Table) choose(r Request) (Plan, error) {
	var best *Plan
	for _, every := range t.schedules() {
		p, err := t.planFor(r, every)
		if err != nil {
			return Plan{}, err
		}
		if best == nil || p.Expected < best.Expected-1e-9 {
			best = &p
		}
	}
	return *best, nil
}

// beats reports whether the plan for r is expected to beat no change (a
// request that cannot be planned does not).
func (t *Table) beats(r Request) bool {
	p, err := t.choose(r)
	return err == nil && p.Expected < 1
}

// toBeat searches, one change at a time, for what would make r's plan
// beat no change (ToBeat). More LHAs, a larger budget and a shorter study
// never expect worse skill (TestMoreLHAsNeverWorse, the table's
// monotonicity in the noise), so each search is a bisection.
func (t *Table) toBeat(r Request) *ToBeat {
	var tb ToBeat
	withLHAs := func(n int) bool { x := r; x.LHAs = n; return t.beats(x) }
	if r.LHAs < MaxHintLHAs && withLHAs(MaxHintLHAs) {
		lo, hi := r.LHAs, MaxHintLHAs // lo does not beat no change, hi does
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; withLHAs(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		tb.LHAs = hi
	}
	withEpsilon := func(e float64) bool { x := r; x.Epsilon = e; return t.beats(x) }
	if r.Epsilon < MaxHintEpsilon && withEpsilon(MaxHintEpsilon) { // false for ε = inf
		lo, hi := r.Epsilon, float64(MaxHintEpsilon)
		for hi/lo > 1.001 {
			if mid := math.Sqrt(lo * hi); withEpsilon(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		// Two significant digits, rounded up, still beating.
		if e := roundUp2(hi); withEpsilon(e) {
			tb.Epsilon = e
		}
	}
	for m := int(math.Ceil(r.Months)) - 1; m >= 1; m-- {
		x := r
		x.Months = float64(m)
		if t.beats(x) {
			tb.Months = m
			break
		}
	}
	if tb == (ToBeat{}) {
		return nil
	}
	return &tb
}

// roundUp2 rounds v > 0 up to two significant digits (a value that
// prints as such: 2.9, not 2.9000000000000004).
func roundUp2(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v))-1)
	r, _ := strconv.ParseFloat(strconv.FormatFloat(math.Ceil(v/p-1e-9)*p, 'g', 2, 64), 64)
	return r
}

// Assess reads the table at a schedule a study has already fixed, rather
// than one the planner chooses: its noise multiplier c (for a noise
// schedule, the root mean square of its c_t, which puts the same noise
// variance into the model), m LHAs per round, and the days between its
// campaign starts. The table's schedule nearest to every on a log scale is
// read; for a single campaign (every 0), where the table's schedules
// differ only in how often the replays measured retrained, the one that
// reads best, as Make chooses for a one-campaign plan.
// Parameters.EveryDays names the schedule read. The warnings are Make's,
// for this schedule.
func (t *Table) Assess(r Request, everyDays int, c float64, m int) (Plan, error) {
	if r.LHAs < 1 || m < 1 || m > r.LHAs {
		return Plan{}, fmt.Errorf("plan: %d LHAs per round of %d", m, r.LHAs)
	}
	if !(c >= 0) || math.IsInf(c, 0) {
		return Plan{}, fmt.Errorf("plan: noise multiplier %v", c)
	}
	z := c / float64(m)
	scheds := t.schedules()
	read := scheds[0]
	for _, s := range scheds {
		if everyDays > 0 && math.Abs(math.Log(float64(everyDays)/float64(s))) < math.Abs(math.Log(float64(everyDays)/float64(read))) ||
			everyDays <= 0 && t.at(s, z).Expected < t.at(read, z).Expected-1e-9 {
			read = s
		}
	}
	p := Parameters{Design: t.Design, EveryDays: read, ExpectedClients: m, SampleRate: float64(m) / float64(r.LHAs),
		NoiseMultiplier: c, NoisePerLHA: z, Clip: t.Clip, Accountant: t.Accountant}
	pl := t.planAt(p)
	if pl.Expected >= 1 && m == r.LHAs && c > 0 {
		// Every LHA in every round: c does not depend on how many there
		// are (q = 1), so more LHAs only divide the noise.
		if n := t.lhasToBeat(read, c, r.LHAs); n > 0 {
			pl.ToBeat = &ToBeat{LHAs: n, scheduleFixed: true}
		}
	}
	pl.Warnings = warnings(r, pl, t.maxZ(read))
	return pl, nil
}

// lhasToBeat is the fewest LHAs above n, at most MaxHintLHAs, whose noise
// per LHA c/N the table expects to beat no change on the schedule every
// (0 if none).
func (t *Table) lhasToBeat(every int, c float64, n int) int {
	if t.at(every, c/MaxHintLHAs).Expected >= 1 {
		return 0
	}
	lo, hi := n, MaxHintLHAs
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if t.at(every, c/float64(mid)).Expected < 1 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// Speaks reports whether the table speaks to a study with settings s: a
// client-level budget (not the privacy "example") and a design it was
// measured for (not the Lipschitz one). Cyclic hand-offs, whose noise the
// table never measured, are the caller's to leave out (their strategy is
// not a setting).
func Speaks(s protocol.Settings) bool {
	return s.Epsilon > 0 && s.Features != string(model.Lipschitz)
}

// AssessStudy is Assess for rounds of a study with settings s and n LHAs
// at noise multiplier c under the lifetime budget eps: its LHAs per round
// and the days between its campaign starts (a continuing study's Every,
// in whole days; a single campaign otherwise). The plan's parameters name
// the study's campaigns and rounds per campaign.
func (t *Table) AssessStudy(s protocol.Settings, n int, eps, c float64) (Plan, error) {
	every := 0
	if s.Campaigns > 1 {
		every = max(1, int(math.Round(time.Duration(s.Every).Hours()/24)))
	}
	p, err := t.Assess(Request{LHAs: n, Epsilon: eps, Delta: s.Delta}, every, c, s.ExpectedClients)
	if err != nil {
		return p, err
	}
	p.Parameters.Campaigns = max(1, s.Campaigns)
	p.Parameters.Rounds = s.Rounds / p.Parameters.Campaigns
	return p, nil
}

func (t *Table) schedules() []int {
	seen := map[int]bool{}
	var out []int
	for _, row := range t.Rows {
		if !seen[row.Every] {
			seen[row.Every] = true
			out = append(out, row.Every)
		}
	}
	sort.Ints(out)
	return out
}

func (t *Table) planFor(r Request, every int) (Plan, error) {
	k := max(1, int(math.Round(r.Months*DaysPerMonth/float64(every))))
	m := model.Design{SampleRate: t.SampleRate, ClientsPerRound: t.ClientsPerRound}.ExpectedClients(r.LHAs)
	q := float64(m) / float64(r.LHAs)
	p := Parameters{Design: t.Design, EveryDays: every, Campaigns: k, Rounds: t.Rounds, ExpectedClients: m, SampleRate: q,
		Clip: t.Clip, Accountant: t.Accountant}
	if !math.IsInf(r.Epsilon, 1) {
		kind, err := privacy.ParseAccountantKind(t.Accountant)
		if err != nil {
			return Plan{}, err
		}
		c, err := privacy.NoiseMultiplierFor(kind, r.Epsilon, r.Delta, q, k*t.Rounds)
		if err != nil {
			return Plan{}, fmt.Errorf("plan: cannot calibrate %d campaigns of %d rounds to ε = %g: %w", k, t.Rounds, r.Epsilon, err)
		}
		p.NoiseMultiplier = c
		p.NoisePerLHA = c / float64(m)
	}
	return t.planAt(p), nil
}

// planAt is the plan of parameters p, read from the table at p's schedule
// and noise per LHA (without warnings).
func (t *Table) planAt(p Parameters) Plan {
	at := t.at(p.EveryDays, p.NoisePerLHA)
	pl := Plan{Parameters: p, Expected: at.Expected, Range: [2]float64{at.Low, at.High}}
	if len(at.ByOutbreak) == len(t.Outbreaks) {
		for i, name := range t.Outbreaks {
			pl.ByOutbreak = append(pl.ByOutbreak, Measured{Outbreak: name, RelativeWIS: at.ByOutbreak[i]})
		}
	}
	return pl
}

// at interpolates the rows of one schedule at z: linearly in log z between
// measured levels, linearly in z between no noise and the smallest level,
// the largest level's values beyond it. The result's Z is z.
func (t *Table) at(every int, z float64) Row {
	var rows []Row
	for _, r := range t.Rows {
		if r.Every == every {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Z < rows[j].Z })
	if z <= rows[0].Z {
		return rows[0]
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if z > b.Z {
			continue
		}
		var f float64
		if a.Z == 0 {
			f = z / b.Z
		} else {
			f = math.Log(z/a.Z) / math.Log(b.Z/a.Z)
		}
		mix := func(x, y float64) float64 { return x + f*(y-x) }
		r := Row{Every: every, Z: z, Expected: mix(a.Expected, b.Expected), Low: mix(a.Low, b.Low), High: mix(a.High, b.High)}
		if len(a.ByOutbreak) == len(b.ByOutbreak) {
			for k := range a.ByOutbreak {
				r.ByOutbreak = append(r.ByOutbreak, mix(a.ByOutbreak[k], b.ByOutbreak[k]))
			}
		}
		return r
	}
	return rows[len(rows)-1]
}

func (t *Table) maxZ(every int) float64 {
	z := 0.0
	for _, r := range t.Rows {
		if r.Every == every {
			z = math.Max(z, r.Z)
		}
	}
	return z
}

// lhas writes "1 LHA" or "n LHAs".
func lhas(n int) string {
	if n == 1 {
		return "1 LHA"
	}
	return fmt.Sprintf("%d LHAs", n)
}

// warnings are the plan's sentences. Exactly one uses the words "no
// change", and only when the expected relative WIS is not below 1.
func warnings(r Request, p Plan, maxZ float64) []string {
	w := []string{}
	eps := "without noise"
	if !math.IsInf(r.Epsilon, 1) {
		eps = fmt.Sprintf("at ε = %g", r.Epsilon)
	}
	if p.Expected >= 1 {
		w = append(w, fmt.Sprintf("with %s %s the shared model is expected to be worse than no change (relative WIS %.2f): %s",
			lhas(r.LHAs), eps, p.Expected, remedy(p.ToBeat)))
	} else if p.Range[1] >= 1 {
		w = append(w, fmt.Sprintf("with %s %s the shared model beats the baseline on average, but not on every outbreak it was measured on, synthetic or real (up to %.2f)", lhas(r.LHAs), eps, p.Range[1]))
	}
	if p.Parameters.NoisePerLHA > maxZ {
		w = append(w, fmt.Sprintf("the noise per LHA (%.3g) is beyond the largest level measured (%.3g): the expectation is that of the largest level, and the truth is likely worse", p.Parameters.NoisePerLHA, maxZ))
	}
	return w
}

// remedy says what would make the shared model beat no change (tb, nil
// when nothing within reach does), in words.
func remedy(tb *ToBeat) string {
	const fallback = "keep forecasting with the baseline"
	if tb == nil {
		return "enrol more LHAs, allow a larger budget or a shorter study, or " + fallback
	}
	var ways []string
	if tb.LHAs > 0 {
		ways = append(ways, fmt.Sprintf("with %d LHAs or more", tb.LHAs))
	}
	if tb.Epsilon > 0 {
		weak := ""
		if tb.Epsilon > weakEpsilon {
			weak = " (a weak promise)"
		}
		ways = append(ways, fmt.Sprintf("with a lifetime budget of ε = %g or more%s", tb.Epsilon, weak))
	}
	if tb.Months == 1 {
		ways = append(ways, "over a study of 1 month")
	} else if tb.Months > 1 {
		ways = append(ways, fmt.Sprintf("over a study of %d months or fewer", tb.Months))
	}
	if tb.scheduleFixed {
		ways = append(ways, "with a larger budget or fewer campaigns")
	}
	return "it is expected to beat it " + strings.Join(ways, ", or ") + " (each change on its own); otherwise " + fallback
}

// weakEpsilon is the budget above which a guarantee is called weak (the
// words of `study new` and the helper's limit).
const weakEpsilon = 10

// NonDecreasing returns the non-decreasing sequence nearest to v on the
// log scale (least squares, pool adjacent violators): where a larger noise
// level measured better than a smaller one, both get the geometric mean
// of the run they break. More noise cannot improve the expected skill; a
// measurement that says it does is a lucky draw of the noise, and a table
// that kept it would tell a study that fewer LHAs forecast better. The
// values must be positive.
func NonDecreasing(v []float64) []float64 {
	type block struct {
		sum float64 // of the logs
		n   int
	}
	var bs []block
	for _, x := range v {
		bs = append(bs, block{math.Log(x), 1})
		for len(bs) > 1 {
			a, b := bs[len(bs)-2], bs[len(bs)-1]
			if a.sum/float64(a.n) <= b.sum/float64(b.n) {
				break
			}
			bs = append(bs[:len(bs)-2], block{a.sum + b.sum, a.n + b.n})
		}
	}
	out := make([]float64, 0, len(v))
	for _, b := range bs {
		m := math.Exp(b.sum / float64(b.n))
		for range b.n {
			out = append(out, m)
		}
	}
	return out
}
