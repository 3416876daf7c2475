package forecast

import "math"

// IntervalScore is the interval score of the central (1−α) interval
// [lo, hi] for the outcome y (Gneiting and Raftery 2007): its width plus
// 2/α times the distance by which y falls outside.
func IntervalScore(lo, hi, alpha, y float64) float64 {
	s := hi - lo
	if y < lo {
		s += 2 / alpha * (lo - y)
	}
	if y > hi {
		s += 2 / alpha * (y - hi)
	}
	return s
}

// WIS is the weighted interval score of Bracher et al. (2021) of q for the
// outcome y, from the median and the K = 3 central intervals q carries
// (50 %, 80 %, 95 %; α = 0.5, 0.2, 0.05):
//
//	WIS = (½·|y − median| + Σₖ αₖ/2 · IS_αₖ) / (K + ½)
//
// Lower is better; it is in the unit of y (cases per day).
func WIS(q Quantiles, y float64) float64 {
	s := 0.5 * math.Abs(y-q.Median())
	for _, in := range intervals {
		alpha := 1 - in.coverage
		s += alpha / 2 * IntervalScore(q[in.lo], q[in.hi], alpha, y)
	}
	return s / (float64(len(intervals)) + 0.5)
}

// Covered reports whether y lies inside the central interval of the given
// coverage (0.5, 0.8 or 0.95), ends included.
func Covered(q Quantiles, coverage, y float64) bool {
	lo, hi, ok := q.Interval(coverage)
	return ok && y >= lo && y <= hi
}

// PITBins is the number of bins of PITBin: the intervals between
// consecutive levels, plus one below the first and one above the last.
const PITBins = NumLevels + 1

// PITEdges are the probability edges of the PIT bins: bin b covers
// PITEdges[b] … PITEdges[b+1].
var PITEdges = [PITBins + 1]float64{0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1}

// PITBin returns which bin of the forecast distribution y fell in: 0 when
// y < q[0], b when q[b−1] ≤ y < q[b], NumLevels when y ≥ q[NumLevels−1].
// For calibrated forecasts bin b is hit with probability
// PITEdges[b+1] − PITEdges[b]; a histogram of hits divided by those widths
// is then flat (the quantile version of the PIT histogram).
func PITBin(q Quantiles, y float64) int {
	for i, v := range q {
		if y < v {
			return i
		}
	}
	return NumLevels
}

// Wilson returns the Wilson score interval for k successes in n trials at
// the normal quantile z (1.96 for 95 %). With n = 0 it is (0, 1).
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return math.Max(0, c-h), math.Min(1, c+h)
}
