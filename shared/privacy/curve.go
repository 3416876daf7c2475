package privacy

import (
	"math"
	"sync"
)

// This file holds the fast path of the RDP → (ε, δ) conversion for a single
// (q, c) pair: a lazily evaluated curve that skips orders which provably
// cannot attain the minimum, and a small cache of such curves.

// epsilon returns ε and the minimising order for rounds releases of the
// curve's (q, c) at δ, with exactly the result of converting the full curve
// (epsilonFrom of rounds·ξ): orders are evaluated only while they might
// attain the minimum.
//
// Why skipping is safe: log A_α is convex in α (A_α = E[L^α] is a moment
// generating function of log L, so Hölder's inequality makes its logarithm
// convex), and log A_0 = log A_1 = 0. A convex function lies above every
// chord extended beyond its interval, so with anchors a₁ < a₂ < α
//
//	log A_α ≥ log A_{a₂} + (α−a₂)·(log A_{a₂} − log A_{a₁})/(a₂−a₁),
//
// and likewise from two anchors above α; also log A_α ≥ 0. The anchors are
// the integer orders ≤ 63, always evaluated (cheap binomial sums). This
// lower bound on ξ(α) gives a lower bound on the order's ε; it is lowered
// further by a slack far above the rounding of the anchors and of the
// order's own series (absolute 1e-11 per unit of log A, of α·log(1−q) and of
// 1, amplified by the extrapolation), and an order is skipped only if even
// that is above the smallest ε found so far. A skipped order therefore would
// not have attained the minimum, and ε and the order returned are those of
// the full conversion. (Skipping could never make ε unsafe in any case: the
// minimum over any subset of orders is a valid bound.)
func (s *scratch) epsilon(rounds int, delta float64) (eps, order float64) {
	if delta == 0 {
		return math.Inf(1), math.NaN()
	}
	if !(delta > 0 && delta < 1) {
		return math.NaN(), math.NaN()
	}
	p := s.p
	if rounds == 0 {
		clear(s.tmp) // nothing released (even where ξ = +Inf)
		return epsilonFrom(p, s.tmp, delta)
	}
	if s.kind != kindSGM || !p.skips {
		T := float64(rounds)
		for i, x := range s.fill() {
			s.tmp[i] = x * T
		}
		return epsilonFrom(p, s.tmp, delta)
	}
	T := float64(rounds)
	ld := math.Log(delta)
	best := math.Inf(1)
	at := func(i int) float64 { // the order's ε, as epsilonFrom computes it
		r := s.xi[i] * T
		if math.IsInf(r, 1) {
			return r
		}
		return r + p.conv[i] - ld/(p.orders[i]-1)
	}
	if !s.boundsOK {
		s.bounds()
	}
	for i, d := range s.done {
		if d {
			best = min(best, at(i))
		}
	}
	for j, cd := range p.cands {
		if s.done[cd.idx] {
			continue
		}
		// Lower bound on the order's ε and the slack for rounding (the
		// bound's own rounding, about 1e-16 of each term, is covered by
		// the 1e-12 terms of the slack).
		L, errL, inv, cv := s.candL[j], s.candErr[j], cd.inv, p.conv[cd.idx]
		lb := (T*L-ld)*inv + cv
		slack := (T*errL-1e-12*ld)*inv + 1e-12*(math.Abs(cv)+math.Abs(best))
		if lb-slack > best {
			continue
		}
		s.order(cd.idx)
		best = min(best, at(cd.idx))
	}
	// epsilonFrom reports (0, NaN) when every order's RDP is 0; a skipped
	// order might not be 0, so settle that case on the full curve.
	zero := true
	for i, d := range s.done {
		zero = zero && (!d || s.xi[i] == 0)
	}
	if zero {
		for _, x := range s.fill() {
			zero = zero && x == 0
		}
		if zero {
			return 0, math.NaN()
		}
	}
	eps, order = math.Inf(1), math.NaN()
	for i, d := range s.done {
		if !d {
			continue
		}
		if e := at(i); e < eps {
			eps, order = e, p.orders[i]
		}
	}
	return max(eps, 0), order
}

// slackRel is the relative size of the slack of the skipping test (see
// scratch.epsilon): a thousand times above the rounding of the anchors'
// binomial sums and of the fractional series.
const slackRel = 1e-11

// bounds evaluates the anchors and, for each candidate, a lower bound L on
// log A_α (from the convexity of log A_α in α, see scratch.epsilon) and the
// error allowance of L plus the order's own rounding. A candidate next to a
// non-finite anchor gets L = −Inf (never skipped).
func (s *scratch) bounds() {
	p := s.p
	for _, i := range p.anchors {
		s.order(i)
	}
	lq1 := math.Abs(s.e.lq1)
	anchor := func(j int) (x, l, err float64, ok bool) {
		switch j {
		case anchorZero:
			return 0, 0, 0, true
		case anchorOne:
			return 1, 0, 0, true
		case anchorNone:
			return 0, 0, 0, false
		}
		x = p.orders[j]
		v := s.xi[j]
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, 0, 0, false
		}
		l = v * (x - 1)
		return x, l, slackRel * (1 + x*lq1 + l), true
	}
	for j, cd := range p.cands {
		a := p.orders[cd.idx]
		L, errL := 0.0, 0.0 // log A_α ≥ 0
		x1, l1, e1, ok1 := anchor(cd.lo1)
		x2, l2, e2, ok2 := anchor(cd.lo2)
		if ok1 && ok2 {
			k := (a - x2) / (x2 - x1)
			if v := l2 + k*(l2-l1); v > L {
				L, errL = v, e2*(1+k)+e1*k
			}
		} else if cd.lo1 != anchorNone {
			L = math.Inf(-1)
		}
		x1, l1, e1, ok1 = anchor(cd.hi1)
		x2, l2, e2, ok2 = anchor(cd.hi2)
		if ok1 && ok2 {
			k := (x1 - a) / (x2 - x1)
			if v := l1 - k*(l2-l1); v > L {
				L, errL = v, e1*(1+k)+e2*k
			}
		} else if cd.hi1 != anchorNone {
			L = math.Inf(-1)
		}
		if math.IsInf(L, -1) {
			s.candL[j], s.candErr[j] = L, 0
			continue
		}
		// The order's own rounding, and that of T·L/(α−1).
		s.candL[j] = L
		s.candErr[j] = errL + slackRel*(1+a*lq1+L) + 1e-12*L
	}
	s.boundsOK = true
}

// curveCacheSize is the number of (q, c) curves over DefaultOrders kept by
// Epsilon and RDP.Compose. A coordinator or simulation calls them
// with the same (q, c) round after round; a few entries cover several
// studies run side by side.
const curveCacheSize = 8

// cachedCurve is one cache entry. mu guards s; the key (q, c) is written
// only with both mu and the cache lock held, so either suffices to read it.
type cachedCurve struct {
	mu   sync.Mutex
	q, c float64
	s    *scratch
}

// curveCache holds the most recently used curves first. Entries are
// evaluated lazily under their own lock, so callers with different (q, c)
// do not wait for each other. The least recently used entry is recycled
// for a new pair when nobody holds it, else replaced by a new one (the
// holder keeps a valid curve).
var curveCache struct {
	sync.Mutex
	list []*cachedCurve
}

// lockedCurve returns the cache entry of (q, c) over DefaultOrders with its
// mu held; the caller unlocks it.
func lockedCurve(q, c float64) *cachedCurve {
	for {
		e := cachedCurveFor(q, c)
		e.mu.Lock()
		if e.q == q && e.c == c {
			return e
		}
		// Recycled for another pair between lookup and lock: look again.
		e.mu.Unlock()
	}
}

// cachedCurveFor returns the entry of (q, c), creating or recycling one if
// needed, and moves it to the front.
func cachedCurveFor(q, c float64) *cachedCurve {
	cc := &curveCache
	cc.Lock()
	defer cc.Unlock()
	for i, e := range cc.list {
		if e.q == q && e.c == c {
			copy(cc.list[1:i+1], cc.list[:i])
			cc.list[0] = e
			return e
		}
	}
	var e *cachedCurve
	if n := len(cc.list); n == curveCacheSize {
		if v := cc.list[n-1]; v.mu.TryLock() {
			v.q, v.c = q, c
			v.s.reset(q, c)
			v.mu.Unlock()
			e = v
		}
	} else {
		cc.list = append(cc.list, nil)
	}
	if e == nil {
		e = &cachedCurve{q: q, c: c, s: newScratch(defaultPlan())}
		e.s.reset(q, c)
	}
	copy(cc.list[1:], cc.list[:len(cc.list)-1])
	cc.list[0] = e
	return e
}
