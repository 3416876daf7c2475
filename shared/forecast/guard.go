package forecast

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Method is where a headlined forecast comes from, in the words the page
// and the client print.
type Method string

// The two methods the guard chooses between.
const (
	MethodNoChange Method = "no change"    // the last 7-day average, free and always available
	MethodModel    Method = "shared model" // the study's released model
)

// GuardMinOrigins is the number of weekly origins kept out of training
// the guard needs before it lets the shared model's record count.
const GuardMinOrigins = 8

// GuardMargin widens the plausible band: a forecast may change by up to
// GuardMargin times the largest change (up or down, as a ratio) the LHA's
// own history shows over the same horizon.
const GuardMargin = 1.5

// TooFewWeeks is the guard's sentence when it cannot judge the model.
const TooFewWeeks = "too few weeks to judge the shared model yet"

// GuardOrigin is one forecast origin whose data the model did not train
// on and whose outcome is known: a forecast the LHA issued, or a window
// at the end of its file kept out of training.
type GuardOrigin struct {
	Area     string
	InputEnd time.Time
	// Model and NoChange are the two forecasts made at the origin, Actual
	// the 7-day average that followed (cases per day).
	Model, NoChange, Actual float64
}

// Judgement is the guard's verdict on the model for one area.
type Judgement struct {
	Method Method
	// Origins is the number of distinct weekly origins scored; the MAEs
	// are over them (NaN when there are none).
	Origins               int
	ModelMAE, NoChangeMAE float64
}

// Judge scores the model against no change on the origins (the model
// never trained on their days) and picks the headline method: with fewer
// than GuardMinOrigins distinct origin dates, no change; otherwise the
// one with the smaller mean absolute error (no change on a tie). Origins
// with a NaN or infinite value are left out; of two origins with the same
// date the first is kept.
func Judge(origins []GuardOrigin) Judgement {
	seen := map[time.Time]bool{}
	var sm, sb float64
	for _, o := range origins {
		if !finite(o.Model) || !finite(o.NoChange) || !finite(o.Actual) || seen[o.InputEnd] {
			continue
		}
		seen[o.InputEnd] = true
		sm += math.Abs(o.Model - o.Actual)
		sb += math.Abs(o.NoChange - o.Actual)
	}
	n := len(seen)
	j := Judgement{Method: MethodNoChange, Origins: n, ModelMAE: math.NaN(), NoChangeMAE: math.NaN()}
	if n > 0 {
		j.ModelMAE, j.NoChangeMAE = sm/float64(n), sb/float64(n)
	}
	if n >= GuardMinOrigins && j.ModelMAE < j.NoChangeMAE {
		j.Method = MethodModel
	}
	return j
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// WeeklyOrigins keeps, of origins sorted or not, those one week apart
// counting back from the latest: the weekly origins of one area.
func WeeklyOrigins(origins []GuardOrigin) []GuardOrigin {
	if len(origins) == 0 {
		return nil
	}
	os := append([]GuardOrigin(nil), origins...)
	sort.SliceStable(os, func(i, k int) bool { return os[i].InputEnd.After(os[k].InputEnd) })
	latest := os[0].InputEnd
	var out []GuardOrigin
	for _, o := range os {
		days := int(math.Round(latest.Sub(o.InputEnd).Hours() / 24))
		if days%7 == 0 && (len(out) == 0 || !out[len(out)-1].InputEnd.Equal(o.InputEnd)) {
			out = append(out, o)
		}
	}
	return out
}

// Band is the range of forecasts the guard finds plausible, in cases per
// day.
type Band struct{ Lo, Hi float64 }

// Changes are the largest rise (Up) and fall (Down) over p days, as
// ratios of (value + 1), in an LHA's own series; OK is false when no
// series has two defined values p days apart.
type Changes struct {
	Up, Down float64
	OK       bool
}

// LargestChanges measures the largest rise and fall over p days in any of
// the LHA's own series. It does not depend on today's level, so one
// measurement serves every area of the file (PlausibleBand per area would
// read the whole file once for each area).
func LargestChanges(history []Series, p int) Changes {
	c := Changes{Up: 1, Down: 1}
	for _, s := range history {
		for i := p; i < len(s.Smoothed); i++ {
			a, z := s.Smoothed[i-p], s.Smoothed[i]
			if !finite(a) || !finite(z) || a < 0 || z < 0 {
				continue
			}
			c.OK = true
			r := (z + 1) / (a + 1)
			c.Up, c.Down = math.Max(c.Up, r), math.Min(c.Down, r)
		}
	}
	return c
}

// Merge returns the changes of both c's series and d's: the larger rise,
// the larger fall (LargestChanges of all the series is the Merge of
// LargestChanges of each).
func (c Changes) Merge(d Changes) Changes {
	return Changes{Up: math.Max(c.Up, d.Up), Down: math.Min(c.Down, d.Down), OK: c.OK || d.OK}
}

// Band is the band around last (today's 7-day average) that these changes
// allow, widened by GuardMargin; ok is false (and the band unbounded) when
// the changes could not be measured.
func (c Changes) Band(last float64) (b Band, ok bool) {
	if !c.OK {
		return Band{0, math.Inf(1)}, false
	}
	return Band{Lo: math.Max(0, (last+1)*c.Down/GuardMargin-1), Hi: (last+1)*c.Up*GuardMargin - 1}, true
}

// PlausibleBand is the band around last (today's 7-day average) that no
// forecast p days ahead should leave: the largest rise and fall, as
// ratios of (value + 1), over p days in any of the LHA's own series,
// widened by GuardMargin. ok is false when no series has two defined
// values p days apart (then no band applies).
func PlausibleBand(history []Series, p int, last float64) (b Band, ok bool) {
	return LargestChanges(history, p).Band(last)
}

// Clamp returns v inside the band and whether it had to move (a NaN is
// moved to the band's nearer edge to no change: its low end).
func (b Band) Clamp(v float64) (float64, bool) {
	switch {
	case math.IsNaN(v):
		return b.Lo, true
	case v < b.Lo:
		return b.Lo, true
	case v > b.Hi:
		return b.Hi, true
	}
	return v, false
}

// ClampQuantiles clamps every level to the band (they stay ordered).
func (b Band) ClampQuantiles(q Quantiles) Quantiles {
	for i := range q {
		q[i], _ = b.Clamp(q[i])
	}
	return q
}

// Headline is what the guard lets an LHA see first for one area.
type Headline struct {
	Judgement
	// Value is the number headlined (cases per day), after the band.
	Value float64
	// Model is the shared model's own forecast, unclamped; ModelShown is
	// it inside the band, ModelClamped whether it had to move.
	Model, ModelShown float64
	ModelClamped      bool
	NoChange          float64
	Band              Band
}

// Guard decides one area's headline: the judgement's method, the model's
// forecast clamped to the band (never headlined as it is when outside).
func Guard(j Judgement, model, noChange float64, band Band) Headline {
	h := Headline{Judgement: j, Model: model, NoChange: noChange, Band: band}
	h.ModelShown, h.ModelClamped = band.Clamp(model)
	h.Value = noChange
	if j.Method == MethodModel {
		h.Value = h.ModelShown
	}
	return h
}

// Reason says in a sentence which method is headlined and why:
// "Headline: no change." or "Headline: shared model.", then Why.
func (h Headline) Reason() string {
	return "Headline: " + string(h.Method) + ". " + h.Why()
}

// Why says why the guard chose the headline's method, and flags a
// clamped model forecast.
func (h Headline) Why() string {
	j := h.Judgement
	var s string
	switch {
	case j.Origins < GuardMinOrigins:
		s = fmt.Sprintf("There are %s: %s kept out of its training (%d are needed).",
			TooFewWeeks, weeks(j.Origins), GuardMinOrigins)
	case j.Method == MethodModel:
		s = fmt.Sprintf("Over the last %s kept out of its training the shared model missed by %s cases per day on average, no change by %s.",
			weeks(j.Origins), Count(j.ModelMAE), Count(j.NoChangeMAE))
	default:
		s = fmt.Sprintf("Over the last %s kept out of the model's training no change missed by %s cases per day on average, the shared model by %s.",
			weeks(j.Origins), Count(j.NoChangeMAE), Count(j.ModelMAE))
	}
	if h.ModelClamped {
		s += " " + h.ClampNote()
	}
	return s
}

// ClampNote says that the model's forecast left the plausible band ("" when
// it did not).
func (h Headline) ClampNote() string {
	if !h.ModelClamped {
		return ""
	}
	return fmt.Sprintf("The shared model's forecast (%s) is a change beyond anything in your own history, even allowing %g times more: it is shown held at %s and flagged.",
		Count(h.Model), GuardMargin, Count(h.ModelShown))
}

func weeks(n int) string {
	if n == 1 {
		return "1 week"
	}
	return strconv.Itoa(n) + " weeks"
}

// Count formats a number of cases for people (the page and the client
// alike): thousands separated by commas, none from 100 up, one decimal
// from 10, at most two below; "–" for NaN, "∞" for infinity.
func Count(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	a := math.Abs(v)
	var s string
	switch {
	case a >= 100 || a == math.Trunc(a):
		digits := strconv.FormatFloat(math.Round(a), 'f', 0, 64)
		var b strings.Builder
		for i, c := range digits {
			if i > 0 && (len(digits)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		s = b.String()
	case a >= 10:
		s = strconv.FormatFloat(a, 'f', 1, 64)
	default:
		s = strings.TrimRight(strings.TrimRight(strconv.FormatFloat(a, 'f', 2, 64), "0"), ".")
	}
	if v < 0 && s != "0" {
		s = "−" + s
	}
	return s
}
