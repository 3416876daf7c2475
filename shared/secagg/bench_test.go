package secagg

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkLHA is an LHA's extra work per round: encode (clip, round, norm
// check), draw and expand the seed, the leader's share, seal, marshal.
func BenchmarkLHA(b *testing.B) {
	e := testEncoder(b)
	pk := testKey(b).PublicKey()
	for _, d := range []int{241, 11777} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			u := randomUpdate(rand.New(rand.NewPCG(1, 1)), d, 0.7)
			k := make([]int64, d)
			b.ReportAllocs()
			for b.Loop() {
				e.Encode(k, u)
				r, err := NewReport(pk, testStudy, 1, 0, k)
				if err != nil {
					b.Fatal(err)
				}
				_ = r.Marshal()
			}
		})
	}
}

// BenchmarkHelper is the helper's work per round for 500 LHAs at d =
// 11,777: open 500 seeds, expand and sum them, add its noise.
func BenchmarkHelper(b *testing.B) {
	const n, d = 500, 11777
	e := testEncoder(b)
	key := testKey(b)
	k := make([]int64, d)
	var fwd []Sealed
	for i := range n {
		r, err := newReport(key.PublicKey(), testStudy, 1, idFor(i), seedFor(i), k)
		if err != nil {
			b.Fatal(err)
		}
		fwd = append(fwd, Sealed{r.ID, r.SealedSeed})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		s, kept, _ := HelperSum(key, testStudy, 1, n, d, fwd)
		if len(kept) != n {
			b.Fatal("reports left out")
		}
		s.AddNoise(e.Noise(), rng)
		_ = s.Share()
	}
}
