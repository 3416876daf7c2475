package privacy_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// Two-sided standard normal quantile for a false-rejection rate of 1e-6
// per check: Φ⁻¹(1 − 5e-7).
const z1e6 = 4.891638475699

// chi2Quantile approximates the p-quantile of χ²_k by Wilson–Hilferty
// (relative error well below 1e-4 for k ≥ 1e4, far inside the tolerance).
func chi2Quantile(k, z float64) float64 {
	a := 2 / (9 * k)
	v := 1 - a + z*math.Sqrt(a)
	return k * v * v * v
}

// TestAddGaussianMoments draws n = 400,000 noise values from NewSecureRand
// (fresh entropy every run) and checks the mean with a z-test and the
// variance with chi-square bounds, each at false-rejection rate 1e-6
// (together ≤ 2e-6 per run).
func TestAddGaussianMoments(t *testing.T) {
	const n, sigma, base = 400_000, 2.5, 7.0
	x := make([]float64, n)
	for i := range x {
		x[i] = base
	}
	privacy.AddGaussian(x, sigma, privacy.NewSecureRand())
	var mean float64
	for _, v := range x {
		mean += v - base
	}
	mean /= n
	var ss float64
	for _, v := range x {
		d := v - base - mean
		ss += d * d
	}
	if tol := z1e6 * sigma / math.Sqrt(n); math.Abs(mean) > tol {
		t.Errorf("mean of noise %g, |mean| > %g (n=%d, false-rejection 1e-6)", mean, tol, n)
	}
	k := float64(n - 1)
	lo, hi := chi2Quantile(k, -z1e6), chi2Quantile(k, z1e6)
	if stat := ss / (sigma * sigma); stat < lo || stat > hi {
		t.Errorf("(n−1)s²/σ² = %g outside χ² bounds [%g, %g] (n=%d, false-rejection 1e-6); s = %g, σ = %g",
			stat, lo, hi, n, math.Sqrt(ss/k), sigma)
	}
	// σ = 0 adds nothing; a negative σ is a programmer error.
	y := []float64{1, 2}
	privacy.AddGaussian(y, 0, privacy.NewSecureRand())
	if y[0] != 1 || y[1] != 2 {
		t.Errorf("σ=0 changed dst: %v", y)
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddGaussian(σ=%v) did not panic", s)
				}
			}()
			privacy.AddGaussian(y, s, privacy.NewSecureRand())
		}()
	}
}

// A fixed stream reproduces (research runs seed their generator).
func TestAddGaussianSeeded(t *testing.T) {
	a, b := make([]float64, 5), make([]float64, 5)
	privacy.AddGaussian(a, 1, rand.New(rand.NewPCG(1, 2)))
	privacy.AddGaussian(b, 1, rand.New(rand.NewPCG(1, 2)))
	for i := range a {
		if a[i] != b[i] || a[i] == 0 {
			t.Fatalf("seeded noise differs or is zero: %v %v", a, b)
		}
	}
}

func TestNewSecureRandDistinct(t *testing.T) {
	// Two generators agreeing on 4 consecutive 64-bit outputs would happen
	// with probability 2⁻²⁵⁶ if seeded independently.
	a, b := privacy.NewSecureRand(), privacy.NewSecureRand()
	same := true
	for range 4 {
		same = same && a.Uint64() == b.Uint64()
	}
	if same {
		t.Fatal("two NewSecureRand streams coincide")
	}
}

func TestL2Norm(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3, 4}, 5},
		{[]float64{0, -3, 0, 4}, 5},
		{[]float64{3e200, 4e200}, 5e200},
		{[]float64{3e-200, 4e-200}, 5e-200},
		{[]float64{3e-320, 4e-320}, 5e-320}, // subnormal
		{[]float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{[]float64{1, math.Inf(-1)}, math.Inf(1)},
	} {
		got := privacy.L2Norm(tc.x)
		if !(got == tc.want || math.Abs(got-tc.want) <= 4e-16*tc.want || (tc.want < 1e-300 && math.Abs(got-tc.want) <= 1e-323)) {
			t.Errorf("L2Norm(%v) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(privacy.L2Norm([]float64{1, math.NaN()})) {
		t.Error("NaN entry did not give NaN")
	}
}

// checkClip clips a copy of x and verifies the contract: the bound holds
// exactly, the norm returned is the norm before, short vectors are left
// alone, long ones keep their direction and land within 1e-9 of the bound.
func checkClip(t *testing.T, x []float64, clip float64) {
	t.Helper()
	y := append([]float64(nil), x...)
	before := privacy.L2Norm(x)
	got := privacy.ClipL2(y, clip)
	if !(got == before || (math.IsNaN(got) && math.IsNaN(before))) {
		t.Fatalf("returned norm %g, L2Norm before %g", got, before)
	}
	after := privacy.L2Norm(y)
	if !(after <= clip) {
		t.Fatalf("‖clip(x)‖ = %.17g > %.17g (n=%d, ‖x‖=%g)", after, clip, len(x), before)
	}
	if math.IsNaN(before) || math.IsInf(before, 0) && !finite(x) {
		for _, v := range y {
			if v != 0 {
				t.Fatalf("non-finite input not zeroed: %v", y)
			}
		}
		return
	}
	if before <= clip {
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("vector within the bound was changed")
			}
		}
		return
	}
	// Clipped: the bound is reached (up to the margin) unless the scaled
	// vector underflowed, and the direction is kept.
	if after < clip*(1-1e-9) && after > 1e-290 {
		t.Fatalf("clipped norm %g far below bound %g", after, clip)
	}
	for i := range x {
		if x[i] != 0 && y[i] != 0 && math.Signbit(x[i]) != math.Signbit(y[i]) {
			t.Fatalf("sign of entry %d flipped", i)
		}
	}
}

func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// TestClipL2Property: 20,000 random vectors, lengths 1–2000, entry scales
// 1e-310 … 1e307 and bounds 1e-300 … 1e300: the clipped norm never exceeds
// the bound.
func TestClipL2Property(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	for it := 0; it < 20_000; it++ {
		n := 1 + rng.IntN(2000)
		if it%4 != 0 {
			n = 1 + rng.IntN(20)
		}
		scale := math.Pow(10, -310+rng.Float64()*617)
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() * scale
		}
		clip := math.Pow(10, -300+rng.Float64()*600)
		if it%3 == 0 {
			clip = privacy.L2Norm(x) * (1 - rng.Float64()*1e-12) // just below the norm: worst rounding
		}
		if !(clip > 0 && clip <= math.MaxFloat64) {
			continue
		}
		checkClip(t, x, clip)
	}
	// The paper's bound on vectors of the model's size.
	for it := 0; it < 200; it++ {
		x := make([]float64, 11777)
		for i := range x {
			x[i] = rng.NormFloat64() * 0.01
		}
		checkClip(t, x, 0.5)
	}
	checkClip(t, []float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, 1)
	checkClip(t, []float64{1, math.NaN()}, 1)
	checkClip(t, []float64{1, math.Inf(1)}, 1)
	checkClip(t, []float64{}, 1)
}

func TestClipL2Panics(t *testing.T) {
	for _, c := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ClipL2(clip=%v) did not panic", c)
				}
			}()
			privacy.ClipL2([]float64{1}, c)
		}()
	}
}

func FuzzClipL2(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 0.5)
	f.Add(1e308, -1e308, 1e308, 1e-300)
	f.Add(3e-320, 0.0, -4e-320, 1e-321)
	f.Add(0.1, 0.2, 0.3, 0.37416573867739417)
	f.Fuzz(func(t *testing.T, a, b, c, clip float64) {
		if !(clip > 0 && clip <= math.MaxFloat64) {
			return
		}
		checkClip(t, []float64{a, b, c}, clip)
		checkClip(t, []float64{a, b, c, a * 0.5, b * 3, c, -a}, clip)
	})
}
