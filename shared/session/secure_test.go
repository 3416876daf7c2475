package session

import (
	"math"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

func TestFlipCoinRate(t *testing.T) {
	// 20,000 flips at q = 0.3: the count is within 5 sd (false rejection
	// about 6e-7).
	const n, q = 20000, 0.3
	c := 0
	for range n {
		if flipCoin(q) {
			c++
		}
	}
	sd := math.Sqrt(n * q * (1 - q))
	if math.Abs(float64(c)-n*q) > 5*sd {
		t.Errorf("%d heads of %d at q = %v", c, n, q)
	}
	if !flipCoin(1) {
		t.Error("q = 1 must always pick")
	}
}

func TestSecureReport(t *testing.T) {
	key, _ := secagg.GenerateKey()
	st := protocol.Study{Clients: 4, SampleRate: 0.5,
		NoiseMultiplier: 1.5, Params: 3, Helper: &protocol.Helper{URL: "http://h", PublicKey: key.PublicKey().Bytes()},
		Settings: protocol.Settings{Epsilon: 1, Delta: 1e-5, Rounds: 3, ExpectedClients: 2,
			ClipNorm: 0.5}}
	real, err := secureReport(&st, 2, 3, []float64{0.3, -0.3, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	zero, err := secureReport(&st, 2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(real) != len(zero) || len(real) != secagg.ReportSize(3) {
		t.Fatalf("sizes %d and %d, want %d for both", len(real), len(zero), secagg.ReportSize(3))
	}
	hash, _ := st.Hash()
	for _, c := range []struct {
		b    []byte
		want []int64
	}{{zero, []int64{0, 0, 0}}, {real, nil}} {
		r, err := secagg.UnmarshalReport(c.b, 3)
		if err != nil {
			t.Fatal(err)
		}
		if r.Round != 2 || r.ID.Client() != 3 {
			t.Fatalf("round %d, LHA %d", r.Round, r.ID.Client())
		}
		seed, err := key.Open(r.SealedSeed, secagg.AssociatedData(hash, 2, r.ID))
		if err != nil {
			t.Fatal(err)
		}
		h := make([]uint64, 3)
		secagg.Expand(h, seed, secagg.Ring64)
		got := make([]int64, 3)
		for j := range got {
			got[j] = secagg.Ring64.Lift(h[j] + r.Leader[j])
		}
		if c.want != nil && (got[0] != 0 || got[1] != 0 || got[2] != 0) {
			t.Fatalf("zero report reconstructs %v", got)
		}
		if c.want == nil && (got[0] <= 0 || got[1] >= 0 || got[0] != -got[1]) {
			t.Fatalf("real report reconstructs %v", got)
		}
	}
	noHelper := st
	noHelper.Helper = nil
	if _, err := secureReport(&noHelper, 1, 0, nil); err == nil {
		t.Error("a report for a study without a helper")
	}
}
