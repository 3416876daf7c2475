package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

// The weekly design (issue 24): forecasts of the next 7-day total from up
// to a year of the area's own history, the public national and state
// totals and the public holidays.
//
// For an origin t (the last reported day) with S(d) the total reported over
// d−6 … d and ℓ(v) = ln(1+v), a window's inputs are
//
//	own:      ℓ(S(t−7k)) − ℓ(S(t−7k−7)),            k = 0 … K−1
//	level:    ℓ(10⁵·S(t)/population) / 5              (0 without a population)
//	totals:   the same log-changes of the national and of the state totals
//	holidays: the share of public holidays in t−6 … t, t−13 … t−7 and in
//	          the target week t+1 … t+7 (by the area's state)
//	cumulative incidence (optional): ℓ(10⁵·C(t)/population) / 10, C(t) the
//	          area's cases reported over t−181 … t (26 weeks, as far as its
//	          series goes; 0 without a population)
//	peak distance (optional): ℓ(S(t)) − max ℓ(S(d)) over d = t−364 … t (as
//	          far as known), for the area and for the state total (0 at the
//	          peak, below 0 after it)
//	recent change (optional): ℓ(H(t)) − ℓ(H(t−7)), H(d) the area's cases
//	          reported over d−2 … d (the last 3 days against the same 3
//	          weekdays a week before)
//
// and its target is ℓ(S(t+7)) − ℓ(S(t)), so an output of 0 is the no-change
// forecast. Everything but the holidays is read from days ≤ t; the
// holidays are public and known in advance.

// Public is what an area's weekly forecast may read besides its own
// counts: public data only, the same for every LHA of a state.
type Public struct {
	// National and State are the published daily totals of the country
	// and of the area's state (nil: not available; the inputs are then 0).
	National, State *series.Region
	// Holidays are the public holidays of the area's state (nil: none).
	Holidays *Holidays
	// Population is the area's public population (0: unknown).
	Population float64
}

// Weekly configures the weekly design's windows.
type Weekly struct {
	// Weeks is K, the weeks of log-changes each series contributes.
	Weeks int `json:"weeks"`
	// Totals adds the national and state log-changes.
	Totals bool `json:"totals"`
	// Holidays adds the holiday shares of the two last input weeks and of
	// the target week.
	Holidays bool `json:"holidays"`
	// HistoryWeeks bounds the training windows: origins at most this many
	// weeks before the campaign's start.
	HistoryWeeks int `json:"history_weeks"`
	// Stride is the number of days between consecutive training origins
	// (1: every day).
	Stride int `json:"stride"`
	// MinTotal drops training windows whose last 7-day total is below it
	// (their log-changes are mostly reporting noise).
	MinTotal float64 `json:"min_total,omitempty"`
	// NoLevel leaves out the level input (the incidence per 100,000).
	NoLevel bool `json:"no_level,omitempty"`
	// Size adds ℓ(S(t))/10, the area's own 7-day total on the log scale
	// (how much of its change is noise).
	Size bool `json:"size,omitempty"`
	// CumIncidence adds the area's cumulative incidence of the last 26
	// weeks, ℓ(10⁵·cases/population)/10 (0 without a population): a proxy
	// of the immunity built up in the area (the tenth round).
	CumIncidence bool `json:"cum_incidence,omitempty"`
	// PeakDistance adds ℓ(S(t)) − max ℓ(S(d)) over the last 52 weeks, for
	// the area and for the state total: whether a wave is at, rising to or
	// falling from its peak (the tenth round).
	PeakDistance bool `json:"peak_distance,omitempty"`
	// Recent adds ℓ(H(t)) − ℓ(H(t−7)), H(d) the area's own cases over
	// d−2 … d: a change centred a day before the origin instead of the
	// 7-day change's three (the eleventh round).
	Recent bool `json:"recent,omitempty"`
	// LevelWeight counts each training window m = 1 + round(3·S(t)/max S)
	// times (1 … 4), S(t) the area's 7-day total at the window's origin and
	// max S the largest of the area's windows: the loss weighs the weeks
	// with many cases more, as the WIS does (the eleventh round).
	LevelWeight bool `json:"level_weight,omitempty"`
	// ClipTarget > 0 clips the training targets (log-changes) to
	// ±ClipTarget, so that a reporting dump or backlog does not dominate
	// the loss (0: off). Forecasts are not clipped by it.
	ClipTarget float64 `json:"clip_target,omitempty"`
	// Loss is the local training loss: "" (the squared error) or
	// "absolute" (the absolute error: the network learns the median
	// log-change).
	Loss string `json:"loss,omitempty"`
	// PersonalSteps > 0 makes each LHA fine-tune a copy of the released
	// model on its own training windows as of the forecast origin
	// (Windows) with that many Adam steps at PersonalRate (0: 0.001) and
	// the design's loss before forecasting (forecast.WeeklyForecaster):
	// local, from the LHA's own data and the public inputs; the copy is
	// never sent. 0: off.
	PersonalSteps int     `json:"personal_steps,omitempty"`
	PersonalRate  float64 `json:"personal_rate,omitempty"`
	// PersonalReleasedErrors makes the ranges of a personalised forecast
	// rest on the released model's past errors (out of sample) instead of
	// the fine-tuned copy's, which was fitted on the same windows.
	PersonalReleasedErrors bool `json:"personal_released_errors,omitempty"`
	// Init is the network's start: "" draws the hidden layers at random
	// (MLP.Init) from the study's seed; "pairs" draws nothing (PairsInit:
	// each first-layer unit reads the positive or the negative part of
	// one input). The output layer is 0 either way: the no-change
	// forecast (the twelfth round).
	Init string `json:"init,omitempty"`
	// Quantiles gives the network one output per hub level
	// (QuantileLevels), trained with the pinball loss: "" off (one
	// output, the ranges from the area's own errors), "head" (the ranges
	// are the network's), "mix" (each quantile the mean on the log scale
	// of the network's and the own errors' range around the same median)
	// (the seventeenth round).
	Quantiles string `json:"quantiles,omitempty"`
	// Median is the rule for the forecast median: "" the network's;
	// "own-trend" S(t)·e^{g/2} on the log scale with g the area's own last
	// weekly log-change (no network); "state-trend" the same with the
	// state total's (PublicChange); "network+state-trend" the mean on the
	// log scale of the network's and the state trend's (the eighteenth
	// round).
	Median string `json:"median,omitempty"`
	// TrendOffHolidays stops a trend median where either week its change
	// compares (origin−13 … origin−7, origin−6 … origin) holds a public
	// holiday of the area's state: "network+state-trend" is then the
	// network's median, a trend alone no change (the nineteenth round).
	TrendOffHolidays bool `json:"trend_off_holidays,omitempty"`
}

// TrainLoss is the nn loss Loss names.
func (w Weekly) TrainLoss() nn.Loss {
	if w.Loss == "absolute" {
		return nn.AbsoluteError
	}
	return nn.SquaredError
}

// Validate checks the configuration.
func (w Weekly) Validate() error {
	switch {
	case w.Weeks < 1 || w.Weeks > 26:
		return fmt.Errorf("model: weekly design with %d weeks of log-changes (want 1 … 26)", w.Weeks)
	case w.HistoryWeeks < 1 || w.HistoryWeeks > 520:
		return fmt.Errorf("model: weekly design with %d weeks of history (want 1 … 520)", w.HistoryWeeks)
	case w.Stride < 1 || w.Stride > 28:
		return fmt.Errorf("model: weekly design with a stride of %d days (want 1 … 28)", w.Stride)
	case !(w.ClipTarget >= 0) || math.IsInf(w.ClipTarget, 0):
		return fmt.Errorf("model: weekly design with a target clip of %v (want 0, off, or a positive number)", w.ClipTarget)
	case w.PersonalSteps < 0 || w.PersonalSteps > 1000:
		return fmt.Errorf("model: weekly design with %d personalisation steps (want 0 … 1000)", w.PersonalSteps)
	case !(w.PersonalRate >= 0 && w.PersonalRate <= 1):
		return fmt.Errorf("model: weekly design with a personalisation learning rate of %v (want 0 … 1)", w.PersonalRate)
	case w.Loss != "" && w.Loss != "absolute":
		return fmt.Errorf("model: weekly design with the loss %q (want \"\", the squared error, or \"absolute\")", w.Loss)
	case w.Init != "" && w.Init != "pairs":
		return fmt.Errorf("model: weekly design with the start %q (want \"\", a random draw, or \"pairs\")", w.Init)
	case w.Quantiles != "" && w.Quantiles != "head" && w.Quantiles != "mix":
		return fmt.Errorf("model: weekly design with the quantiles %q (want \"\", \"head\" or \"mix\")", w.Quantiles)
	case w.Median != "" && w.Median != "own-trend" && w.Median != "state-trend" && w.Median != "network+state-trend":
		return fmt.Errorf("model: weekly design with the median %q (want \"\", the network's, \"own-trend\", \"state-trend\" or \"network+state-trend\")", w.Median)
	case w.Median != "" && w.Quantiles != "":
		return fmt.Errorf("model: weekly design with a quantile head and the median %q (not combined)", w.Median)
	case w.Quantiles != "" && w.Init == "pairs":
		return fmt.Errorf("model: weekly design with a quantile head and the \"pairs\" start (not combined)")
	}
	return nil
}

// Inputs returns the number of network inputs.
func (w Weekly) Inputs() int {
	n := w.Weeks
	if !w.NoLevel {
		n++
	}
	if w.Size {
		n++
	}
	if w.Totals {
		n += 2 * w.Weeks
	}
	if w.Holidays {
		n += 3
	}
	if w.CumIncidence {
		n++
	}
	if w.PeakDistance {
		n += 2
	}
	if w.Recent {
		n++
	}
	return n
}

// Lead is the number of days before an origin a window reads: an origin
// needs reports from origin−Lead … origin.
func (w Weekly) Lead() int { return 7*w.Weeks + 6 }

// Total7 returns the total of r over the 7 days ending on last, and false
// when any of those days lies outside r.
func Total7(r *series.Region, last time.Time) (float64, bool) {
	if r == nil {
		return 0, false
	}
	i := r.Index(last)
	if i < 6 || i >= len(r.Cases) {
		return 0, false
	}
	s := 0.0
	for _, v := range r.Cases[i-6 : i+1] {
		s += max(v, 0)
	}
	return s, true
}

// changes writes the K weekly log-changes of r ending on origin into dst;
// false when r does not cover origin−Lead … origin.
func (w Weekly) changes(dst []float64, r *series.Region, origin time.Time) bool {
	prev, ok := Total7(r, origin)
	if !ok {
		return false
	}
	for k := range w.Weeks {
		before, ok := Total7(r, origin.AddDate(0, 0, -7*(k+1)))
		if !ok {
			return false
		}
		dst[k] = l(prev) - l(before)
		prev = before
	}
	return true
}

// Input writes the inputs of the window ending on origin into dst (len
// Inputs()). It reads the area's and the totals' reports of days ≤ origin
// only. It returns false when the area's series does not cover
// origin−Lead … origin; a total that does not is read as no change.
func (w Weekly) Input(dst []float64, r *series.Region, pub Public, origin time.Time) bool {
	if len(dst) != w.Inputs() {
		panic(fmt.Sprintf("model: weekly Input: dst has %d values, want %d", len(dst), w.Inputs()))
	}
	origin = series.Date(origin)
	K := w.Weeks
	if !w.changes(dst[:K], r, origin) {
		return false
	}
	s, _ := Total7(r, origin)
	i := K
	if !w.NoLevel {
		dst[i] = 0
		if pub.Population > 0 {
			dst[i] = l(1e5*s/pub.Population) / 5
		}
		i++
	}
	if w.Size {
		dst[i] = l(s) / 10
		i++
	}
	if w.Totals {
		for _, tot := range []*series.Region{pub.National, pub.State} {
			if !w.changes(dst[i:i+K], tot, origin) {
				clear(dst[i : i+K])
			}
			i += K
		}
	}
	if w.Holidays {
		dst[i] = pub.Holidays.Share(origin)
		dst[i+1] = pub.Holidays.Share(origin.AddDate(0, 0, -7))
		dst[i+2] = pub.Holidays.Share(origin.AddDate(0, 0, 7))
		i += 3
	}
	if w.CumIncidence {
		dst[i] = 0
		if pub.Population > 0 {
			dst[i] = l(1e5*recentCases(r, origin, cumIncidenceDays)/pub.Population) / 10
		}
		i++
	}
	if w.PeakDistance {
		dst[i], _ = peakDistance(r, origin, peakDays)
		dst[i+1], _ = peakDistance(pub.State, origin, peakDays)
		i += 2
	}
	if w.Recent {
		dst[i] = recentChange(r, origin)
	}
	return true
}

// recentChange returns ℓ(H(origin)) − ℓ(H(origin−7)), H(d) the cases r
// reports over d−2 … d (negative counts read as 0). The caller has checked
// that r covers origin−Lead … origin; it reads no day after origin.
func recentChange(r *series.Region, origin time.Time) float64 {
	return l(recentCases(r, origin, 3)) - l(recentCases(r, origin.AddDate(0, 0, -7), 3))
}

// The spans of the wave inputs: 26 weeks of cases for the cumulative
// incidence, 52 weeks of 7-day totals for the peak.
const (
	cumIncidenceDays = 26 * 7
	peakDays         = 52*7 + 1
)

// recentCases returns the cases r reports over the days origin−days+1 …
// origin that it covers (negative counts read as 0). It reads no day after
// origin.
func recentCases(r *series.Region, origin time.Time, days int) float64 {
	i := r.Index(origin)
	if i < 0 || i >= len(r.Cases) {
		return 0
	}
	s := 0.0
	for _, v := range r.Cases[max(0, i-days+1) : i+1] {
		s += max(v, 0)
	}
	return s
}

// peakDistance returns ℓ(S(origin)) − max ℓ(S(d)) over the days d =
// origin−days+1 … origin whose 7-day total r covers (≤ 0; 0 at the peak),
// and false (with 0) when r does not cover S(origin). It reads no day after
// origin.
func peakDistance(r *series.Region, origin time.Time, days int) (float64, bool) {
	now, ok := Total7(r, origin)
	if !ok {
		return 0, false
	}
	i := r.Index(origin)
	lo := max(6, i-days+1)
	s := 0.0 // S(lo), then the running 7-day total S(j)
	for _, v := range r.Cases[lo-6 : lo+1] {
		s += max(v, 0)
	}
	peak := max(s, now)
	for j := lo + 1; j < i; j++ {
		s += max(r.Cases[j], 0) - max(r.Cases[j-7], 0)
		peak = max(peak, s)
	}
	return l(now) - l(peak), true
}

// Target returns the network's target of the window ending on origin:
// ℓ(S(origin+7)) − ℓ(S(origin)); false when r does not cover both weeks.
func Target(r *series.Region, origin time.Time) (float64, bool) {
	origin = series.Date(origin)
	now, ok := Total7(r, origin)
	next, ok2 := Total7(r, origin.AddDate(0, 0, 7))
	if !ok || !ok2 {
		return 0, false
	}
	return l(next) - l(now), true
}

// Windows returns the training windows an LHA builds on day asOf (the
// campaign's start): origins asOf−7, asOf−7−Stride, … back to HistoryWeeks
// weeks before asOf, whose target week has been reported by asOf. x is
// n×Inputs() row-major, y the n targets, oldest window first. It reads no
// report after asOf.
func (w Weekly) Windows(r *series.Region, pub Public, asOf time.Time) (x, y []float64) {
	asOf = series.Date(asOf)
	in := w.Inputs()
	first := asOf.AddDate(0, 0, -7*w.HistoryWeeks)
	var origins []time.Time
	for o := asOf.AddDate(0, 0, -7); !o.Before(first); o = o.AddDate(0, 0, -w.Stride) {
		origins = append(origins, o)
	}
	row := make([]float64, in)
	var level []float64 // S(t) of each kept window, for LevelWeight
	for i := len(origins) - 1; i >= 0; i-- {
		o := origins[i]
		t, ok := Target(r, o)
		if !ok || !w.Input(row, r, pub, o) {
			continue
		}
		if s, _ := Total7(r, o); s < w.MinTotal {
			continue
		}
		if w.ClipTarget > 0 {
			t = max(-w.ClipTarget, min(w.ClipTarget, t))
		}
		x = append(x, row...)
		y = append(y, t)
		if w.LevelWeight {
			s, _ := Total7(r, o)
			level = append(level, s)
		}
	}
	if w.LevelWeight {
		x, y = levelWeighted(x, y, level, in)
	}
	if k := w.Outputs(); k > 1 {
		// Every output of a quantile head learns from the same target.
		rep := make([]float64, 0, k*len(y))
		for _, t := range y {
			for range k {
				rep = append(rep, t)
			}
		}
		y = rep
	}
	return x, y
}

// levelWeighted repeats window i of (x, y) m_i = 1 + round(3·level_i/max
// level) times, in place of it (full-batch training then weighs it m_i
// times). With no positive level every window counts once.
func levelWeighted(x, y, level []float64, in int) (wx, wy []float64) {
	top := 0.0
	for _, v := range level {
		top = max(top, v)
	}
	if top <= 0 {
		return x, y
	}
	for i, t := range y {
		m := 1 + int(math.Round(3*level[i]/top))
		for range m {
			wx = append(wx, x[i*in:(i+1)*in]...)
			wy = append(wy, t)
		}
	}
	return wx, wy
}

// ForecastTotal turns the network's output for the window ending on
// origin into the forecast total of origin+1 … origin+7 (never below 0):
// exp(ℓ(S(origin)) + damping·output) − 1, the output clamped to ±5. An
// output of 0 is the no-change forecast S(origin).
func ForecastTotal(r *series.Region, origin time.Time, out, damping float64) float64 {
	s, ok := Total7(r, series.Date(origin))
	if !ok {
		return math.NaN()
	}
	if out == 0 || math.IsNaN(out) {
		return s
	}
	out = max(-maxLogChange, min(maxLogChange, damping*out))
	return max(0, math.Expm1(l(s)+out))
}

// PredictTotals returns the forecast 7-day totals of the windows ending on
// each of origins, using the network m with params (NaN where the area's
// series does not cover a window).
func (w Weekly) PredictTotals(m *nn.MLP, params []float64, r *series.Region, pub Public, origins []time.Time, damping float64) []float64 {
	in := w.Inputs()
	x := make([]float64, len(origins)*in)
	okay := make([]bool, len(origins))
	for i, o := range origins {
		okay[i] = w.Input(x[i*in:(i+1)*in], r, pub, o)
	}
	k := w.Outputs()
	raw := make([]float64, len(origins)*k)
	m.Predict(params, x, raw)
	out := make([]float64, len(origins))
	for i, o := range origins {
		if okay[i] {
			out[i] = w.median(r, pub, o, ForecastTotal(r, o, medianOf(raw[i*k:(i+1)*k]), damping))
		} else {
			out[i] = math.NaN()
		}
	}
	return out
}

// WeeklyTotal names the weekly design's feature map (Weekly): it is not a
// window map of Features' methods and is refused by Parse, so a one-month
// study file can never carry it.
const WeeklyTotal Features = "weekly-total"

// WeeklyDesign is the design for deployments over time (issue 24): the
// next 7-day total from 4 weeks of log-changes of the area's own, the
// national and the state totals, the area's level per 100,000, and the
// holiday shares of the last two input weeks and the target week (16
// inputs); training windows from every other day of the last 52 weeks; MLP
// 16-32-1 (577 parameters) from a no-change start, trained locally with
// the absolute error (the median log-change; the fourth round's pick);
// every LHA in every round (q = 1), T = 5 rounds a campaign, E = 30,
// S = 0.5, learning rate 0.001, the forecast change damped by half, RDP.
// docs/results.md, "Design over time", has the rules it was chosen by and
// the measurements (the eighth round adopted E = 15 and reversed it).
var WeeklyDesign = Design{
	Name: "weekly", Features: WeeklyTotal, History: 7*4 + 7, Hidden: []int{32},
	Rounds: 5, SampleRate: 1, LocalEpochs: 30, Clip: 0.5, LearningRate: 0.001,
	Damping: 0.5, Accountant: "rdp",
	Weekly: &Weekly{Weeks: 4, Totals: true, Holidays: true, HistoryWeeks: 52, Stride: 2, Loss: "absolute"},
}

// WeeklyE15 is WeeklyDesign with E = 15 local steps a round
// (ReplayPreset "weekly-e15"): the eighth round of tuning's pick, adopted
// and then reversed after the full-span backtest (docs/results.md,
// "Design over time").
var WeeklyE15 = func() Design {
	d := WeeklyDesign.clone()
	d.Name, d.LocalEpochs = "weekly-e15", 15
	return d
}()

// WeeklyTrend is WeeklyDesign with its median mixed on the log scale
// with half the state total's last weekly change carried on, off the
// weeks with public holidays (ReplayPreset "weekly-trend"; Weekly.Median
// "network+state-trend", TrendOffHolidays): the nineteenth round's
// candidate (docs/results.md, "Design over time").
var WeeklyTrend = func() Design {
	d := WeeklyDesign.clone()
	d.Name, d.Weekly.Median, d.Weekly.TrendOffHolidays = "weekly-trend", "network+state-trend", true
	return d
}()

// WeeklySquared is the weekly design of the first three rounds of tuning
// (ReplayPreset "weekly-squared"): WeeklyDesign trained with the squared
// error.
var WeeklySquared = func() Design {
	d := WeeklyDesign.clone()
	d.Name, d.Weekly.Loss = "weekly-squared", ""
	return d
}()

// Network returns the weekly design's network: Inputs()-Hidden…-Outputs() (one
// output unless a quantile head).
func (d Design) Network() *nn.MLP {
	sizes := []int{d.History}
	if d.Weekly != nil {
		sizes[0] = d.Weekly.Inputs()
	}
	out := 1
	if d.Weekly != nil {
		out = d.Weekly.Outputs()
	}
	sizes = append(append(sizes, d.Hidden...), out)
	return nn.NewMLP(sizes...)
}

// Init writes the design's initial model into dst: for the weekly design
// the network's random initialisation with the output layer at zero (the
// no-change forecast; public, costs no privacy), otherwise Features.Init.
func (d Design) Init(m *nn.MLP, dst []float64, rng *rand.Rand) {
	if d.Weekly != nil {
		if d.Weekly.Init == "pairs" {
			PairsInit(m, dst)
			return
		}
		LogChange.initRandom(m, dst, rng)
		if d.Weekly.Quantiles != "" {
			// The output biases (the last values) start at the prior's
			// normal ranges around no change.
			copy(dst[len(dst)-len(quantileStart):], quantileStart)
		}
		return
	}
	d.Features.Init(m, dst, rng)
}

// StartCampaign writes into dst the model a campaign after the first
// starts from, given the previous campaign's model and the design's
// initial model init (Init with the study's seed): CampaignStart "" the
// previous model, "restart" init, "half" (init + previous)/2. It panics on
// any other CampaignStart (CheckCampaignStart refuses them first).
func (d Design) StartCampaign(dst, previous, init []float64) {
	switch d.CampaignStart {
	case "":
		copy(dst, previous)
	case "restart":
		copy(dst, init)
	case "half":
		for i := range dst {
			dst[i] = (init[i] + previous[i]) / 2
		}
	default:
		panic(fmt.Sprintf("model: campaign start %q", d.CampaignStart))
	}
}

// CheckCampaignStart refuses a CampaignStart StartCampaign does not know.
func (d Design) CheckCampaignStart() error {
	switch d.CampaignStart {
	case "", "restart", "half":
		return nil
	}
	return fmt.Errorf("model: design %q with the campaign start %q (want \"\", the previous campaign's model, \"restart\" or \"half\")", d.Name, d.CampaignStart)
}

// PairsInit writes the weekly design's fixed start into dst: unit j of the
// first hidden layer reads input ⌊j/2⌋ mod n (n inputs) with weight +1
// for even j and −1 for odd j, so that with 2n units the layer holds the
// positive and the negative part of every input; unit j of a later hidden
// layer reads unit j mod s of the layer before (s its width) with weight
// 1; every other weight, every bias and the output layer are 0. The
// network starts as the no-change forecast, a linear forecast from all
// the inputs is one step of its output layer away, and nothing is drawn.
func PairsInit(m *nn.MLP, dst []float64) {
	if len(dst) != m.NumParams() {
		panic(fmt.Sprintf("model: PairsInit: dst has %d values, want %d", len(dst), m.NumParams()))
	}
	clear(dst)
	sizes := m.Sizes()
	off := 0
	for l := 1; l < len(sizes)-1; l++ {
		fi, fo := sizes[l-1], sizes[l]
		for j := range fo {
			if l == 1 {
				dst[off+j*fi+(j/2)%fi] = float64(1 - 2*(j%2))
			} else {
				dst[off+j*fi+j%fi] = 1
			}
		}
		off += fo*fi + fo
	}
}

// CheckStudyFeatures checks a study's feature map with its weekly windows:
// WeeklyTotal needs a valid w; every other map (Parse) needs none.
func CheckStudyFeatures(features string, w *Weekly) error {
	if Features(features) == WeeklyTotal {
		if w == nil {
			return fmt.Errorf("model: features %q need the weekly design's settings (\"weekly\")", WeeklyTotal)
		}
		return w.Validate()
	}
	if w != nil {
		return fmt.Errorf("model: weekly settings given with features %q (want %q)", features, WeeklyTotal)
	}
	_, err := Parse(features)
	return err
}
