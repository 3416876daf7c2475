package backtest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// DefaultEvery is the default number of days between campaign starts.
const DefaultEvery = 28

// Options configure Run.
type Options struct {
	// Cases holds every area; each area is one simulated LHA.
	Cases *series.Dataset
	// AreaState maps an area id to its state (the counties file's state
	// column); Population to its population. Both public; either may be nil.
	AreaState  map[string]string
	Population map[string]float64
	// Holiday is the holiday calendar handed to the design (nil: none).
	Holiday func(state string, day time.Time) bool
	// From and To are the first and last forecast origins' bounds: origins
	// are From, From+7, … up to To, both included.
	From, To time.Time
	// Epsilon is the lifetime client-level budget of the whole replay,
	// all campaigns composed (+Inf: no noise); Delta its δ.
	Epsilon, Delta float64
	// Every is the number of days between campaign starts (0: 28).
	Every int
	// Rounds per campaign (0: the design's).
	Rounds int
	// FirstRounds, when > 0, is the number of rounds of the first
	// campaign only (a warm start on all history known at its start);
	// the later campaigns run Rounds. 0: the design's FirstRounds, or
	// Rounds when the design has none. Part of the schedule fixed before
	// the first campaign, so the lifetime ε composes exactly.
	FirstRounds int
	// NoiseMultiplier, when > 0, replaces the calibration: every round
	// gets this c and Epsilon is ignored (the lifetime ε is what the
	// rounds compose to). For research only: the planner's table is
	// measured at given noise levels.
	NoiseMultiplier float64
	// Design is the forecasting design every LHA runs.
	Design Design
	// Seed, when not nil, makes the randomness reproducible (research
	// mode); nil draws sampling and noise from privacy.NewSecureRand.
	Seed *uint64
	// Workers is the number of LHAs computed at once (0: GOMAXPROCS).
	Workers int
	// Progress, when not nil, receives one line per campaign and origin.
	Progress io.Writer
	// Publish, when not nil, also publishes every forecast with output
	// noise (publish.go; the design must be a Publisher).
	Publish *PublishOptions
}

// Campaign is one training campaign of a replay.
type Campaign struct {
	Start  time.Time `json:"start"`
	Rounds int       `json:"rounds"`
	// Epsilon is the lifetime ε spent once the campaign is done (every
	// LHA takes part in the same campaigns, so it is every LHA's).
	Epsilon float64 `json:"epsilon"`
	// ModelSHA256 is the hash of the campaign's released model.
	ModelSHA256 string `json:"model_sha256"`
}

// Schedule is the replay's privacy schedule, fixed before the first
// campaign.
type Schedule struct {
	Starts []time.Time
	// Rounds is T, the rounds of every campaign but the first;
	// FirstRounds the first campaign's (equal to Rounds without a warm
	// start).
	Rounds, FirstRounds int
	Clients             int // N
	ExpectedClients     int // m
	SampleRate          float64
	NoiseMultiplier     float64 // c; 0 when Epsilon is +Inf
	Accountant          privacy.AccountantKind
	Epsilon, Delta      float64
}

// Result is a replay: the forecasts of every area at every origin.
type Result struct {
	Schedule  Schedule
	Origins   []time.Time
	Areas     []string
	Campaigns []Campaign
	// Forecasts[o][a] are area a's quantiles of the total over
	// Origins[o]+1 … +7 (every level, whatever method produced them).
	Forecasts [][]forecast.Quantiles
	// EpsilonAt[o] is the lifetime ε spent when Origins[o] was forecast.
	EpsilonAt []float64
	// Fallbacks counts forecasts the design did not make (no-change
	// fallback).
	Fallbacks int
	Seconds   float64
	// Published[o][a] is the published forecast (with Options.Publish),
	// PublishedEpsilon the largest ε per person-year of one case over
	// them, at PublishedDelta.
	Published                        [][]forecast.Quantiles
	PublishedEpsilon, PublishedDelta float64
}

// EpsilonSpent is the largest lifetime ε of any LHA (0 before any
// campaign; +Inf for a replay without noise).
func (r *Result) EpsilonSpent() float64 {
	if len(r.Campaigns) == 0 {
		return 0
	}
	return r.Campaigns[len(r.Campaigns)-1].Epsilon
}

// Origins returns the forecast origins from, from+7, … ≤ to.
func Origins(from, to time.Time) []time.Time {
	var out []time.Time
	for t := series.Date(from); !t.After(series.Date(to)); t = t.AddDate(0, 0, WeekDays) {
		out = append(out, t)
	}
	return out
}

// CampaignStarts returns from, from+every, … ≤ to.
func CampaignStarts(from, to time.Time, every int) []time.Time {
	var out []time.Time
	for t := series.Date(from); !t.After(series.Date(to)); t = t.AddDate(0, 0, every) {
		out = append(out, t)
	}
	return out
}

func (o *Options) check() error {
	switch {
	case o.Cases == nil || len(o.Cases.Regions) == 0:
		return errors.New("backtest: the cases file has no areas")
	case o.Design == nil:
		return errors.New("backtest: no design")
	case o.From.IsZero() || o.To.IsZero():
		return errors.New("backtest: --from and --to are required (YYYY-MM-DD)")
	case o.To.Before(o.From):
		return fmt.Errorf("backtest: --to %s is before --from %s", o.To.Format(time.DateOnly), o.From.Format(time.DateOnly))
	case o.Every < 0 || o.Every > 3650:
		return fmt.Errorf("backtest: --every %d days (want 1 … 3650)", o.Every)
	case o.Rounds < 0:
		return fmt.Errorf("backtest: --rounds %d (want ≥ 1)", o.Rounds)
	case o.FirstRounds < 0 || o.FirstRounds > 1000:
		return fmt.Errorf("backtest: --first-rounds %d (want 1 … 1000, or 0 for the design's)", o.FirstRounds)
	case o.NoiseMultiplier < 0 || math.IsNaN(o.NoiseMultiplier) || math.IsInf(o.NoiseMultiplier, 0):
		return fmt.Errorf("backtest: noise multiplier %v (want ≥ 0)", o.NoiseMultiplier)
	case o.NoiseMultiplier == 0 && (math.IsNaN(o.Epsilon) || o.Epsilon <= 0):
		return fmt.Errorf("backtest: --epsilon %v (want a number > 0, or inf)", o.Epsilon)
	}
	if o.NoiseMultiplier == 0 && !math.IsInf(o.Epsilon, 1) {
		if err := privacy.CheckEpsilon(o.Epsilon); err != nil {
			return fmt.Errorf("backtest: --epsilon: %w", err)
		}
		if err := privacy.CheckDelta(o.Delta); err != nil {
			return fmt.Errorf("backtest: --delta: %w", err)
		}
		// The study engine refuses δ ≥ 1/N as well, but only at the first
		// campaign and in the words of a study file.
		if n := len(o.Cases.Regions); o.Delta*float64(n) >= 1 {
			return fmt.Errorf("backtest: --delta %v is not below 1/N = %.3g (N = %d LHAs, one per area of the cases file): a larger δ admits releasing an LHA's data outright (default 1e-5)",
				o.Delta, 1/float64(n), n)
		}
	}
	first, _ := o.Cases.Span()
	if !series.Date(first).Before(series.Date(o.From)) {
		return fmt.Errorf("backtest: the cases file starts on %s, not before --from %s: the first campaign would have no history",
			first.Format(time.DateOnly), o.From.Format(time.DateOnly))
	}
	return o.checkEnd()
}

// checkEnd refuses a replay whose last origin lies after the last day of
// an area's counts: at origin t an LHA knows its reports up to t, and a
// file that stops before t cannot say what they were. The error names the
// last origin every area can forecast and the last whose week can be
// scored. (An origin whose target week runs past the file's end is
// forecast but not scored: Scored.UnscoredOrigins.)
func (o *Options) checkEnd() error {
	origins := Origins(o.From, o.To)
	if len(origins) == 0 {
		return nil
	}
	lastOrigin := origins[len(origins)-1]
	var short []string
	var end time.Time // the earliest last day among those areas
	for _, r := range o.Cases.Regions {
		if e := r.End(); e.Before(lastOrigin) {
			short = append(short, r.Name)
			if end.IsZero() || e.Before(end) {
				end = e
			}
		}
	}
	if len(short) == 0 {
		return nil
	}
	what := "the cases file ends on " + end.Format(time.DateOnly)
	if len(short) < len(o.Cases.Regions) {
		what = fmt.Sprintf("the counts of %s end on %s", nameAreas(short), end.Format(time.DateOnly))
	}
	what = fmt.Sprintf("backtest: %s, before the last forecast origin %s (--to %s): at an origin each LHA must know its reports up to that day",
		what, lastOrigin.Format(time.DateOnly), o.To.Format(time.DateOnly))
	forecastable, ok := lastOriginBy(o.From, end)
	if !ok {
		return fmt.Errorf("%s, and it ends before --from %s: choose --from and --to on or before %s",
			what, o.From.Format(time.DateOnly), end.Format(time.DateOnly))
	}
	fix := fmt.Sprintf("the last origin that can be forecast is %s", forecastable.Format(time.DateOnly))
	if scorable, ok := lastOriginBy(o.From, end.AddDate(0, 0, -WeekDays)); ok {
		fix += fmt.Sprintf(", the last whose target week can be scored %s: set --to to one of those", scorable.Format(time.DateOnly))
	} else {
		fix += fmt.Sprintf(" (no origin's target week can be scored): set --to to %s or earlier", forecastable.Format(time.DateOnly))
	}
	return fmt.Errorf("%s; %s", what, fix)
}

// lastOriginBy is the last origin from, from+7, … on or before day, and
// false when from is after day.
func lastOriginBy(from, day time.Time) (time.Time, bool) {
	from, day = series.Date(from), series.Date(day)
	if day.Before(from) {
		return time.Time{}, false
	}
	days := int(day.Sub(from).Hours()/24 + 0.5)
	return from.AddDate(0, 0, days/WeekDays*WeekDays), true
}

// nameAreas names one area, or up to three areas and how many more.
func nameAreas(names []string) string {
	if len(names) == 1 {
		return "area \u201c" + names[0] + "\u201d"
	}
	shown := names[:min(len(names), 3)]
	s := "\u201c" + strings.Join(shown, "\u201d, \u201c") + "\u201d"
	if len(names) > len(shown) {
		s += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	return fmt.Sprintf("%d areas (%s)", len(names), s)
}

// PlanSchedule fixes the privacy schedule before the first campaign: the
// campaign starts, T, m and q, and the one noise multiplier c with which
// all planned campaigns' rounds compose to (Epsilon, Delta) by the
// design's accountant.
func PlanSchedule(o *Options) (Schedule, error) {
	if err := o.check(); err != nil {
		return Schedule{}, err
	}
	every := o.Every
	if every == 0 {
		every = DefaultEvery
	}
	rec := o.Design.Recipe()
	s := Schedule{Starts: CampaignStarts(o.From, o.To, every), Rounds: o.Rounds, Clients: len(o.Cases.Regions),
		Epsilon: o.Epsilon, Delta: o.Delta}
	if s.Rounds == 0 {
		s.Rounds = rec.Rounds
	}
	s.FirstRounds = o.FirstRounds
	if s.FirstRounds == 0 {
		s.FirstRounds = rec.FirstRounds
	}
	if s.FirstRounds == 0 {
		s.FirstRounds = s.Rounds
	}
	s.ExpectedClients = rec.ExpectedClients(s.Clients)
	s.SampleRate = float64(s.ExpectedClients) / float64(s.Clients)
	kind, err := privacy.ParseAccountantKind(rec.Accountant)
	if err != nil {
		return s, fmt.Errorf("backtest: design %q: %w", rec.Name, err)
	}
	s.Accountant = kind
	if o.NoiseMultiplier > 0 {
		s.NoiseMultiplier = o.NoiseMultiplier
		s.Epsilon, err = s.LifetimeEpsilon(len(s.Starts))
		o.Epsilon = s.Epsilon
		return s, err
	}
	if math.IsInf(o.Epsilon, 1) {
		return s, nil
	}
	total := s.TotalRounds(len(s.Starts))
	c, err := privacy.NoiseMultiplierFor(kind, o.Epsilon, o.Delta, s.SampleRate, total)
	if err != nil {
		return s, fmt.Errorf("backtest: cannot calibrate the noise for %s (%s in all) within ε = %g: %w; raise --epsilon, or plan fewer rounds (--rounds, a larger --every)",
			count(len(s.Starts), "campaign"), count(total, "round"), o.Epsilon, err)
	}
	s.NoiseMultiplier = c
	return s, nil
}

// RoundsOf is the number of rounds of campaign k (0 the first).
func (s Schedule) RoundsOf(k int) int {
	if k == 0 && s.FirstRounds > 0 {
		return s.FirstRounds
	}
	return s.Rounds
}

// TotalRounds is the number of rounds of the first k campaigns.
func (s Schedule) TotalRounds(k int) int {
	n := 0
	for i := range k {
		n += s.RoundsOf(i)
	}
	return n
}

// LifetimeEpsilon is the ε after the first k campaigns of s, composed by
// its accountant (0 for k = 0, +Inf without noise).
func (s Schedule) LifetimeEpsilon(k int) (float64, error) {
	if k == 0 {
		return 0, nil
	}
	if s.NoiseMultiplier == 0 {
		return math.Inf(1), nil
	}
	ev := []privacy.Event{{SampleRate: s.SampleRate, NoiseMultiplier: s.NoiseMultiplier, Rounds: s.TotalRounds(k)}}
	return privacy.EpsilonFor(s.Accountant, ev, s.Delta)
}

// Run replays the deployment: campaigns at the schedule's starts, a
// forecast of every area at every origin from the last campaign's model.
func Run(o Options) (*Result, error) {
	began := time.Now()
	sch, err := PlanSchedule(&o)
	if err != nil {
		return nil, err
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	pub, err := forecast.NewPublicInputs(o.Cases, o.AreaState, o.Population)
	if err != nil {
		return nil, err
	}
	pub.Holiday = o.Holiday
	lhas := make([]*series.Dataset, len(o.Cases.Regions))
	res := &Result{Schedule: sch, Origins: Origins(o.From, o.To)}
	for i, r := range o.Cases.Regions {
		lhas[i] = &series.Dataset{Regions: []*series.Region{r}}
		res.Areas = append(res.Areas, r.Name)
	}
	rp := &replay{o: &o, sch: sch, pub: pub, lhas: lhas}
	var global []float64
	var ledger []privacy.Event // every committed round of every campaign
	var pubs *published
	if o.Publish != nil {
		if pubs, err = rp.newPublished(); err != nil {
			return nil, err
		}
	}
	next := 0
	for _, t := range res.Origins {
		for next < len(sch.Starts) && !sch.Starts[next].After(t) {
			// The gate: the planned campaign must fit the lifetime budget.
			if planned, err := sch.LifetimeEpsilon(next + 1); err != nil || planned > o.Epsilon*(1+1e-9) {
				return nil, fmt.Errorf("backtest: campaign %d would take the lifetime ε to %v > %v (%v)", next+1, planned, o.Epsilon, err)
			}
			var evs []privacy.Event
			if global, evs, err = rp.campaign(next, global); err != nil {
				return nil, err
			}
			ledger = append(ledger, evs...)
			eps, err := lifetime(sch, ledger)
			if err != nil {
				return nil, err
			}
			res.Campaigns = append(res.Campaigns, Campaign{Start: sch.Starts[next], Rounds: sch.RoundsOf(next), Epsilon: eps, ModelSHA256: protocol.HashHex(global)})
			next++
		}
		qs, fallbacks, err := rp.forecastAll(global, t)
		if err != nil {
			return nil, err
		}
		res.Forecasts = append(res.Forecasts, qs)
		res.EpsilonAt = append(res.EpsilonAt, res.EpsilonSpent())
		res.Fallbacks += fallbacks
		if pubs != nil {
			pq, err := rp.publishAll(pubs, global, t)
			if err != nil {
				return nil, err
			}
			res.Published = append(res.Published, pq)
		}
		rp.progress("origin %s: %d areas forecast (ε spent %.3g)", t.Format(time.DateOnly), len(qs), res.EpsilonSpent())
	}
	if pubs != nil {
		res.PublishedEpsilon, _ = pubs.acc.CaseEpsilon(pubs.o.Delta)
		res.PublishedDelta = pubs.o.Delta
	}
	res.Seconds = time.Since(began).Seconds()
	return res, nil
}

// lifetime composes the committed rounds of all campaigns by the
// schedule's accountant (+Inf without noise).
func lifetime(sch Schedule, ledger []privacy.Event) (float64, error) {
	if sch.NoiseMultiplier == 0 {
		return math.Inf(1), nil
	}
	return privacy.EpsilonFor(sch.Accountant, ledger, sch.Delta)
}

type replay struct {
	o    *Options
	sch  Schedule
	pub  *forecast.PublicInputs
	lhas []*series.Dataset
}

func (rp *replay) progress(format string, a ...any) {
	if rp.o.Progress != nil {
		fmt.Fprintf(rp.o.Progress, "backtest: "+format+"\n", a...)
	}
}

// parallel calls f(worker, i) for i in 0 … n−1 on the replay's workers.
func (rp *replay) parallel(n int, f func(worker, i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, rp.o.Workers)
	var mu sync.Mutex
	next := 0
	for w := range rp.o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n || errs[w] != nil {
					return
				}
				errs[w] = f(w, i)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forecastAll forecasts every LHA at origin t from what it knew on t.
func (rp *replay) forecastAll(global []float64, t time.Time) ([]forecast.Quantiles, int, error) {
	out := make([]forecast.Quantiles, len(rp.lhas))
	fell := make([]bool, len(rp.lhas))
	pub := rp.pub.Until(t)
	err := rp.parallel(len(rp.lhas), func(_, i int) error {
		own := Until(rp.lhas[i], t)
		var qs []forecast.Quantiles
		if global != nil && len(own.Regions) == 1 {
			var err error
			if qs, err = rp.o.Design.Forecast(global, own, pub); err != nil {
				return fmt.Errorf("backtest: area %s, origin %s: %w", rp.lhas[i].Regions[0].Name, t.Format(time.DateOnly), err)
			}
		}
		if len(qs) == 1 && qs[0].Valid() {
			out[i] = qs[0]
			return nil
		}
		out[i], fell[i] = NoChange(rp.lhas[i].Regions[0], t), true
		return nil
	})
	n := 0
	for _, f := range fell {
		if f {
			n++
		}
	}
	return out, n, err
}

// NoChange is the fallback forecast of an area at origin t: every level
// the total of its own days t−6 … t (missing days count as 0).
func NoChange(r *series.Region, t time.Time) forecast.Quantiles {
	v := weekTotal(r, t.AddDate(0, 0, -WeekDays+1))
	if math.IsNaN(v) {
		v = 0
	}
	var q forecast.Quantiles
	for i := range q {
		q[i] = v
	}
	return q
}

// weekTotal is the total of r's 7 days from first on, NaN when any of
// them lies outside the series.
func weekTotal(r *series.Region, first time.Time) float64 {
	i := r.Index(first)
	if i < 0 || i+WeekDays > len(r.Cases) {
		return math.NaN()
	}
	s := 0.0
	for _, v := range r.Cases[i : i+WeekDays] {
		s += v
	}
	return s
}
