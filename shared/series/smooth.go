package series

import (
	"fmt"
	"math"
	"strings"
)

// Smoothing selects the 7-day moving average.
type Smoothing int

const (
	// Centered averages days t−3 … t+3 (the paper's preprocessing). It
	// removes weekday artefacts without a lag, but the last three days of
	// the data have no value yet.
	Centered Smoothing = iota
	// Trailing averages days t−6 … t (the paper's revised code). It lags
	// the data by three days but is defined up to the last reported day.
	Trailing
)

// String returns "centered" or "trailing".
func (s Smoothing) String() string {
	switch s {
	case Centered:
		return "centered"
	case Trailing:
		return "trailing"
	}
	return fmt.Sprintf("Smoothing(%d)", int(s))
}

// ParseSmoothing parses "centered" (also "centred") or "trailing".
func ParseSmoothing(s string) (Smoothing, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "centered", "centred", "center", "centre":
		return Centered, nil
	case "trailing":
		return Trailing, nil
	}
	return 0, fmt.Errorf("%w: smoothing %q (want centered or trailing)", ErrOption, s)
}

// offsets returns how many raw days before and after day t the average
// over day t reads.
func (s Smoothing) offsets() (before, after int) {
	if s == Trailing {
		return 6, 0
	}
	return 3, 3
}

// MovingAverage7 writes the 7-day moving average of src into dst:
//
//	Centered: dst[i] = (src[i−3] + … + src[i+3]) / 7,  3 ≤ i ≤ len−4
//	Trailing: dst[i] = (src[i−6] + … + src[i]) / 7,    6 ≤ i
//
// Days where the window would reach past either end of src are set to
// NaN (no padding, no shrinking window), so an undefined value can never
// be mistaken for data. Each value is summed afresh from its seven
// inputs, in order, so there is no drift along long series. dst may be
// src (the average is computed in place); otherwise they must not
// overlap. MovingAverage7 panics if len(dst) != len(src).
func MovingAverage7(dst, src []float64, s Smoothing) {
	if len(dst) != len(src) {
		panic("series: MovingAverage7 length mismatch")
	}
	before, _ := s.offsets()
	n := len(src)
	// ring holds src[j−6 … j] for the window ending at raw day j, so that
	// writing dst (possibly src itself) never clobbers an unread input.
	var ring [7]float64
	for j := 0; j < n; j++ {
		ring[j%7] = src[j]
		i := j - 6 + before // output day whose window ends at j
		if j >= 6 {
			sum := 0.0
			for k := j - 6; k <= j; k++ {
				sum += ring[k%7]
			}
			dst[i] = sum / 7
		}
	}
	// Undefined days: the first `before` and the last 6−before.
	for i := 0; i < min(before, n); i++ {
		dst[i] = math.NaN()
	}
	for i := max(n-(6-before), 0); i < n; i++ {
		dst[i] = math.NaN()
	}
	if n < 7 {
		for i := range dst {
			dst[i] = math.NaN()
		}
	}
}
