package protocol

import (
	"fmt"
	"testing"
	"time"
)

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

// BenchmarkUnpickedRound is what an LHA that was not picked does per
// round since every LHA answers every round: decode the round_start
// (hash check of the model) and encode a dummy of the model's size. For
// the default design (241 weights) and the paper's (11 777).
func BenchmarkUnpickedRound(b *testing.B) {
	for _, p := range []int{241, 11777} {
		b.Run(fmt.Sprint(p), func(b *testing.B) {
			w := make([]float64, p)
			for i := range w {
				w[i] = float64(i) * 1e-3
			}
			_, rs, err := Encode(&RoundStart{Round: 1, TimeLeft: 54 * time.Second, Weights: w})
			if err != nil {
				b.Fatal(err)
			}
			zeros := make([]float64, p)
			for b.Loop() {
				if _, err := Decode(Binary, rs); err != nil {
					b.Fatal(err)
				}
				if _, _, err := Encode(&Update{Round: 1, Dummy: true, Weights: zeros}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
