package nn

import (
	"runtime"
	"testing"
)

// Kernels names one of the three kernel sets, and "scalar" whenever the
// vector kernels are off (a build without GOEXPERIMENT=simd, WebAssembly, or
// a CPU without AVX2).
func TestKernelsName(t *testing.T) {
	switch k := Kernels(); k {
	case "AVX-512", "AVX2":
		if runtime.GOARCH != "amd64" {
			t.Errorf("Kernels() = %q on %s", k, runtime.GOARCH)
		}
	case "scalar":
	default:
		t.Errorf("Kernels() = %q, want AVX-512, AVX2 or scalar", k)
	}
}
