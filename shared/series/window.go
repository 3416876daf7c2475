package series

import (
	"fmt"
	"time"
)

// Default window sizes (spec §3).
const (
	DefaultHistory = 10 // H: input days per window
	DefaultHorizon = 7  // P: days from the last input day to the target
)

// WindowOptions configures MakeWindows and LatestInput. The zero value
// gives the paper's setting: H = 10, P = 7, centred average, all days.
type WindowOptions struct {
	// History is H, the number of smoothed days per input. Defaults to 10.
	History int
	// Horizon is P, the number of days from the last input day to the
	// target day. Defaults to 7.
	Horizon int
	// Smoothing selects the 7-day average. Defaults to Centered.
	Smoothing Smoothing
	// From and To bound the study window, both days inclusive (only the
	// calendar date counts). Zero From means each region's first day with
	// a defined smoothed value, zero To its last one. For LatestInput a
	// non-zero To is the last reported day to use (later rows are
	// ignored); From is not used there.
	From, To time.Time
}

func (o WindowOptions) withDefaults() (WindowOptions, error) {
	if o.History == 0 {
		o.History = DefaultHistory
	}
	if o.Horizon == 0 {
		o.Horizon = DefaultHorizon
	}
	if o.History < 1 || o.History > 10000 {
		return o, fmt.Errorf("%w: history H = %d (want 1 … 10000)", ErrOption, o.History)
	}
	if o.Horizon < 1 || o.Horizon > 10000 {
		return o, fmt.Errorf("%w: horizon P = %d (want 1 … 10000)", ErrOption, o.Horizon)
	}
	if o.Smoothing != Centered && o.Smoothing != Trailing {
		return o, fmt.Errorf("%w: smoothing %d", ErrOption, int(o.Smoothing))
	}
	if !o.From.IsZero() {
		o.From = Date(o.From)
	}
	if !o.To.IsZero() {
		o.To = Date(o.To)
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		return o, fmt.Errorf("%w: study window ends (%s) before it starts (%s)",
			ErrOption, o.To.Format(time.DateOnly), o.From.Format(time.DateOnly))
	}
	return o, nil
}

// Window is one supervised sample: smoothed counts on H consecutive days
// and the smoothed count P days after the last of them.
type Window struct {
	Region   string
	X        []float64 // len H: smoothed values on InputEnd−H+1 … InputEnd
	Y        float64   // smoothed value on Target
	InputEnd time.Time // date of X[H−1]
	Target   time.Time // InputEnd + P days
}

// Area holds one region's windows, ordered by Target.
type Area struct {
	Region  string
	Windows []Window
}

// MakeWindows cuts each region of d into supervised windows (spec §3).
//
// The study window From … To has days 0 … L−1. Smoothed values come from
// raw days around each study day (centred: ±3, trailing: the 6 before),
// so a region's data must cover From−3 … To+3 (centred) or From−6 … To
// (trailing); otherwise MakeWindows fails with ErrNotCovered naming the
// region and the missing dates. A sample has inputs on days k−H+1 … k and
// its target on day k+P, for H ≤ k ≤ L−1−P: that is L−H−P samples per
// region. k starts at H rather than H−1 because the paper's code also
// reads day k−H inside the window; with H = 10, P = 7 this gives 14
// windows for 2020-11-01 … 2020-12-01 and 15 for 2022-03-01 … 2022-04-01.
//
// With From (To) zero the study window starts (ends) on the region's
// first (last) day with a defined smoothed value, and the same rule
// applies. Missing days inside a region's range are zeros (see Parse), so
// a region with a long gap simply has zero inputs there.
//
// A region that yields no window is an error (ErrTooShort). Areas come in
// the order of d.Regions; each area's X slices share one fresh backing
// array, and do not overlap.
func MakeWindows(d *Dataset, opt WindowOptions) ([]Area, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	areas := make([]Area, 0, len(d.Regions))
	var smooth []float64
	for _, r := range d.Regions {
		lo, hi, err := studyDays(r, opt)
		if err != nil {
			return nil, err
		}
		L := hi - lo + 1
		n := L - opt.History - opt.Horizon
		if n < 1 {
			return nil, fmt.Errorf("%w: region %q: the study window %s … %s has %d days; H = %d and P = %d need at least %d",
				ErrTooShort, r.Name, r.Date(lo).Format(time.DateOnly), r.Date(hi).Format(time.DateOnly),
				L, opt.History, opt.Horizon, opt.History+opt.Horizon+1)
		}
		// Smooth only the raw days the study window reads: smooth[i] is
		// the average on day lo+i.
		before, after := opt.Smoothing.offsets()
		raw := r.Cases[lo-before : hi+after+1]
		if cap(smooth) < len(raw) {
			smooth = make([]float64, len(raw))
		}
		smooth = smooth[:len(raw)]
		MovingAverage7(smooth, raw, opt.Smoothing)
		sm := smooth[before : before+L]

		H := opt.History
		backing := make([]float64, n*H)
		area := Area{Region: r.Name, Windows: make([]Window, n)}
		for w := range n {
			k := H + w // study-window index of the last input day
			end := lo + k
			x := backing[w*H : (w+1)*H : (w+1)*H]
			copy(x, sm[k-H+1:k+1])
			area.Windows[w] = Window{
				Region:   r.Name,
				X:        x,
				Y:        sm[k+opt.Horizon],
				InputEnd: r.Date(end),
				Target:   r.Date(end + opt.Horizon),
			}
		}
		areas = append(areas, area)
	}
	return areas, nil
}

// studyDays returns the indices into r.Cases of the study window's first
// and last day, checking that the raw data cover the smoothing margins.
func studyDays(r *Region, opt WindowOptions) (lo, hi int, err error) {
	before, after := opt.Smoothing.offsets()
	n := len(r.Cases)
	lo, hi = before, n-1-after
	if !opt.From.IsZero() {
		lo = r.Index(opt.From)
	}
	if !opt.To.IsZero() {
		hi = r.Index(opt.To)
	}
	if opt.From.IsZero() && opt.To.IsZero() {
		if hi < lo {
			return 0, 0, fmt.Errorf("%w: region %q has %d days; the 7-day average needs at least 7",
				ErrTooShort, r.Name, n)
		}
		return lo, hi, nil
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("%w: region %q: study window %s … %s is empty for its data %s … %s",
			ErrNotCovered, r.Name, r.Date(lo).Format(time.DateOnly), r.Date(hi).Format(time.DateOnly),
			r.Start.Format(time.DateOnly), r.End().Format(time.DateOnly))
	}
	needLo, needHi := lo-before, hi+after
	if needLo >= 0 && needHi <= n-1 {
		return lo, hi, nil
	}
	msg := ""
	if needLo < 0 {
		msg = fmt.Sprintf("%s … %s", r.Date(needLo).Format(time.DateOnly), r.Date(min(-1, needHi)).Format(time.DateOnly))
	}
	if needHi > n-1 {
		if msg != "" {
			msg += " and "
		}
		msg += fmt.Sprintf("%s … %s", r.Date(max(n, needLo)).Format(time.DateOnly), r.Date(needHi).Format(time.DateOnly))
	}
	return 0, 0, &CoverageError{Region: r.Name, Missing: msg, DataFirst: r.Start, DataLast: r.End(),
		From: r.Date(lo), To: r.Date(hi), NeedFirst: r.Date(needLo), NeedLast: r.Date(needHi), Smoothing: opt.Smoothing}
}

// LatestInput returns the most recent complete input window of r, for a
// live forecast (spec §3 "Live forecasts"). With the centred average the
// last smoothed value is 3 days before the last reported day, so the
// input ends there and the target lies P−3 days past the data (4 days
// for P = 7); with the trailing average the input ends on the last
// reported day and the target is P days later. A non-zero opt.To is
// taken as the last reported day (later rows are ignored); opt.From is
// not used. x is a fresh slice of length H.
func LatestInput(r *Region, opt WindowOptions) (x []float64, inputEnd, target time.Time, err error) {
	opt, err = opt.withDefaults()
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	last := len(r.Cases) - 1
	if !opt.To.IsZero() {
		last = r.Index(opt.To)
		if last > len(r.Cases)-1 {
			return nil, time.Time{}, time.Time{}, fmt.Errorf("%w: region %q has no data after %s, asked for a forecast as of %s",
				ErrNotCovered, r.Name, r.End().Format(time.DateOnly), opt.To.Format(time.DateOnly))
		}
	}
	before, after := opt.Smoothing.offsets()
	end := last - after
	start := end - opt.History + 1
	if start-before < 0 {
		return nil, time.Time{}, time.Time{}, fmt.Errorf("%w: region %q has %d days up to %s; H = %d with the %s 7-day average needs %d",
			ErrTooShort, r.Name, max(last+1, 0), r.Date(last).Format(time.DateOnly), opt.History, opt.Smoothing, opt.History+6)
	}
	smooth := make([]float64, last+1)
	MovingAverage7(smooth, r.Cases[:last+1], opt.Smoothing)
	x = append([]float64(nil), smooth[start:end+1]...)
	return x, r.Date(end), r.Date(end + opt.Horizon), nil
}

// Stack flattens the windows of areas, in order, into a row-major n×H
// matrix x and the n targets y, for a trainer. It panics if windows have
// different lengths.
func Stack(areas []Area) (x, y []float64) {
	n, H := 0, -1
	for _, a := range areas {
		for _, w := range a.Windows {
			if H < 0 {
				H = len(w.X)
			} else if len(w.X) != H {
				panic("series: Stack windows of different lengths")
			}
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	x = make([]float64, 0, n*H)
	y = make([]float64, 0, n)
	for _, a := range areas {
		for _, w := range a.Windows {
			x = append(x, w.X...)
			y = append(y, w.Y)
		}
	}
	return x, y
}
