package publish

import (
	"errors"
	"fmt"
	"math"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
)

// WeekDays is the length of a week, the unit of the features and of the
// published target (the total of the 7 days after the origin).
const WeekDays = 7

// MaxLogChange bounds the network's forecast log-change (a clamp, which is
// 1-Lipschitz and so covered by the bound).
const MaxLogChange = 3

// DefaultKappa is the public floor κ (cases per day) of the features
// log(κ + weekly average): the larger κ, the smaller one case's effect.
const DefaultKappa = model.LipschitzKappa

// Forecaster is the publishable forecaster: with u_w = log(κ + A_w), A_w
// the average daily count of the w-th week before the origin (w = 0: the
// last 7 days up to and including the origin; each day read as max(0,
// count)), and z_j = u_j − u_{j+1} (j = 0 … Weeks−2), the median of the
// next week's daily average on the log scale is
//
//	m = u_0 + Damping · clamp(g(z), ±MaxLogChange),
//
// where g is Net with Params. Every quantity is public except the counts.
type Forecaster struct {
	Kappa   float64
	Weeks   int
	Damping float64
	Net     *nn.MLP
	Params  []float64
}

// ErrShortHistory means the area has fewer than Weeks·7 days.
var ErrShortHistory = errors.New("publish: too few days for a publishable forecast")

// Check returns an error unless f's public parameters are usable.
func (f *Forecaster) Check() error {
	switch {
	case !(f.Kappa > 0) || math.IsInf(f.Kappa, 0):
		return fmt.Errorf("publish: floor κ %v must be a positive number", f.Kappa)
	case f.Weeks < 2:
		return fmt.Errorf("publish: %d input weeks, need at least 2", f.Weeks)
	case !(f.Damping > 0 && f.Damping <= 1):
		return fmt.Errorf("publish: damping %v must be in (0, 1]", f.Damping)
	case f.Net == nil || f.Net.In() != f.Weeks-1 || f.Net.Out() != 1 || len(f.Params) != f.Net.NumParams():
		return fmt.Errorf("publish: the network must read %d inputs, give 1 output and have its parameters", f.Weeks-1)
	}
	return nil
}

// Days returns the number of days the forecaster reads: 7·Weeks.
func (f *Forecaster) Days() int { return WeekDays * f.Weeks }

// Logs returns u_0 … u_{Weeks−1} for the last Days() values of daily
// (oldest first, the origin last).
func (f *Forecaster) Logs(daily []float64) ([]float64, error) {
	n := f.Days()
	if len(daily) < n {
		return nil, fmt.Errorf("%w: %d days, need %d", ErrShortHistory, len(daily), n)
	}
	daily = daily[len(daily)-n:]
	u := make([]float64, f.Weeks)
	for w := range u {
		end := n - w*WeekDays
		s := 0.0
		for _, v := range daily[end-WeekDays : end] {
			if v > 0 { // NaN and negative corrections read as 0
				s += v
			}
		}
		u[w] = math.Log(f.Kappa + s/WeekDays)
	}
	return u, nil
}

// Change returns the damped, clamped log-change D·clamp(g(z)) for the logs u.
func (f *Forecaster) Change(u []float64) float64 {
	z := make([]float64, f.Weeks-1)
	for j := range z {
		z[j] = u[j] - u[j+1]
	}
	out := []float64{0}
	f.Net.Predict(f.Params, z, out)
	g := out[0]
	if math.IsNaN(g) {
		g = 0
	}
	return f.Damping * max(-MaxLogChange, min(MaxLogChange, g))
}

// Median returns m, the unpublished median of log(κ + next week's daily
// average), from the area's daily counts (the origin last).
func (f *Forecaster) Median(daily []float64) (float64, error) {
	u, err := f.Logs(daily)
	if err != nil {
		return 0, err
	}
	return u[0] + f.Change(u), nil
}

// Sensitivity returns Δ_w, w = 0 … Weeks−1: the largest change of Median
// when one case is added to or removed from one day of week w before the
// origin, for every possible history. With c = log(1 + 1/(7κ)) (the most
// one case moves one u_w) and L = Π‖W_l‖₂ (exact; 1 for a projected
// network, so that the bound is the same public number for every released
// model): Δ_0 = c(1 + D·L) (u_0 enters m directly and z_0), Δ_w = √2·c·D·L
// for 0 < w < Weeks−1 (u_w enters z_{w−1} and z_w), Δ_{Weeks−1} = c·D·L.
func (f *Forecaster) Sensitivity() []float64 {
	c := math.Log1p(1 / (WeekDays * f.Kappa))
	// The SVD is exact up to rounding (relative 1e-15): a projected
	// network's computed bound is at most 1 + 1e-9, and its true one ≤ 1.
	l := f.Net.LipschitzBound(f.Params)
	if l <= 1+1e-9 {
		l = 1
	} else {
		l *= 1 + 1e-9
	}
	dl := f.Damping * l
	out := make([]float64, f.Weeks)
	for w := range out {
		switch w {
		case 0:
			out[w] = c * (1 + dl)
		case f.Weeks - 1:
			out[w] = c * dl
		default:
			out[w] = math.Sqrt2 * c * dl
		}
	}
	return out
}
