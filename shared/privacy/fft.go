package privacy

import (
	"math"
	"math/bits"
	"sync"
)

// An in-place iterative radix-2 FFT over complex128, for the PLD
// accountant's convolutions. The twiddle factors are computed one by one
// with math.Sincos (no recurrence), so their error is one rounding each;
// the table of the largest size used so far is kept and smaller sizes read
// it with a stride.

var twiddleCache struct {
	sync.Mutex
	w []complex128 // w[k] = exp(−2πik/n) for k < n/2, n = 2·len(w)
}

// twiddles returns a table for size n (a power of two ≥ 2) and the stride
// to read it with.
func twiddles(n int) ([]complex128, int) {
	twiddleCache.Lock()
	defer twiddleCache.Unlock()
	if 2*len(twiddleCache.w) < n {
		w := make([]complex128, n/2)
		for k := range w {
			s, c := math.Sincos(2 * math.Pi * float64(k) / float64(n))
			w[k] = complex(c, -s)
		}
		twiddleCache.w = w
	}
	return twiddleCache.w, 2 * len(twiddleCache.w) / n
}

// fft transforms x in place: X[k] = Σ_j x[j]·exp(−2πijk/n) (inverse=false)
// or x[j] = (1/n)·Σ_k X[k]·exp(+2πijk/n) (inverse=true). len(x) must be a
// power of two; it panics otherwise.
func fft(x []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	if n&(n-1) != 0 {
		panic("privacy: fft size is not a power of two")
	}
	if inverse {
		// ifft(X) = conj(fft(conj(X)))/n.
		for i, v := range x {
			x[i] = complex(real(v), -imag(v))
		}
	}
	shift := 64 - uint(bits.Len(uint(n))-1)
	for i := range x {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	w, stride := twiddles(n)
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := stride * (n / size)
		for start := 0; start < n; start += size {
			a := x[start : start+half]
			b := x[start+half : start+size]
			for k := range a {
				t := w[k*step] * b[k]
				b[k] = a[k] - t
				a[k] += t
			}
		}
	}
	if inverse {
		s := 1 / float64(n)
		for i, v := range x {
			x[i] = complex(real(v)*s, -imag(v)*s)
		}
	}
}
