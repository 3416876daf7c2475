package protocol

import "testing"

// BenchmarkDecodeUpdate decodes one update of the paper's model (11 777
// weights, a 94 KB frame): what the coordinator spends per buffered frame
// when a round's window closes.
func BenchmarkDecodeUpdate(b *testing.B) {
	w := make([]float64, 11777)
	for i := range w {
		w[i] = float64(i) * 1e-3
	}
	_, f, err := Encode(&Update{Round: 1, Weights: w})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		if _, err := Decode(Binary, f); err != nil {
			b.Fatal(err)
		}
	}
}
