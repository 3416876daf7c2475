package session

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
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

// openReport is what the two servers together recover from one report:
// the LHA's encoded update k (the helper's share from the opened seed plus
// the leader's share, no noise).
func openReport(t *testing.T, key *secagg.PrivateKey, st *protocol.Study, round int, body []byte) []int64 {
	t.Helper()
	r, err := secagg.UnmarshalReport(body, st.Params)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := st.Hash()
	sum, kept, rejected := secagg.HelperSum(key, hash, round, st.Clients, st.Params, []secagg.Sealed{{ID: r.ID, SealedSeed: r.SealedSeed}})
	if len(rejected) != 0 {
		t.Fatalf("round %d: the report does not open: %v", round, rejected[0].Err)
	}
	sum.AddNoiseVector(make([]int64, st.Params)) // no noise: the test reads k itself
	k, err := secagg.CombineLeader(kept, secagg.MarshalShare(sum.Share()), []*secagg.Report{r}, make([]int64, st.Params))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSecureOwnLimitIsPerServer: with a helper the LHA's own ε limit
// applies to each server's ε (noise multiplier c), not to the public's
// (√2·c): with a limit between each server's ε after rounds 2 and 3, and
// above the public's ε after round 3, the LHA trains in rounds 1 and 2
// and sits out round 3, still sending a report of the same size (of
// zero) on time.
func TestSecureOwnLimitIsPerServer(t *testing.T) {
	key, _ := secagg.GenerateKey()
	st := fakeStudy()
	st.Rounds, st.SampleRate, st.ExpectedClients = 3, 1, 2
	st.Helper = &protocol.Helper{URL: "http://h", PublicKey: key.PublicKey().Bytes()}
	epsAt := func(c float64, rounds int) float64 {
		acc := privacy.NewRDP(nil)
		acc.Compose(1, c, rounds)
		eps, _ := acc.Epsilon(st.Delta)
		return eps
	}
	limit := (epsAt(1, 2) + epsAt(1, 3)) / 2
	if pub := epsAt(secagg.PublicNoiseMultiplier(1), 3); !(pub < limit) {
		t.Fatalf("test set-up: the public's ε after 3 rounds %v is not below the limit %v", pub, limit)
	}
	d := newPipeDialer()
	w := [][]float64{{0.1, 0.2, 0.3, 0}, {0.2, 0.1, 0.3, 0.5}, {0.3, 0.1, 0.2, 0.4}, {0.3, 0.2, 0.2, 0.4}}
	real := make([]bool, 4)
	sizes := map[int]bool{}
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			c := coordinator{t, <-d.ends}
			idx := 1
			c.send(&protocol.Welcome{Study: st, LHA: "Kreis A", State: protocol.StateWaiting, Index: &idx})
			for r := 1; r <= 3; r++ {
				c.send(&protocol.RoundStart{Round: r, TimeLeft: answerIn, Weights: w[r-1]})
				m, err := c.recv()
				if err != nil {
					return err
				}
				rep, ok := m.(*protocol.Report)
				if !ok || rep.Round != r {
					return fmt.Errorf("round %d: got %T, want a report", r, m)
				}
				sizes[len(rep.Body)] = true
				real[r] = slices.ContainsFunc(openReport(t, key, &st, r, rep.Body), func(v int64) bool { return v != 0 })
				c.send(released(st, r, w[r]))
			}
			c.send(&protocol.Finished{Rounds: 3, Reason: "rounds", ModelSHA256: protocol.HashHex(w[3])})
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial, MaxEpsilon: limit})
	if err != nil {
		t.Fatal(err)
	}
	skips := runSkips(t, ctx, s, serverDone)
	if !real[1] || !real[2] || real[3] {
		t.Errorf("real updates in rounds 1–3: %v, want rounds 1 and 2 only", real[1:])
	}
	if len(skips) != 1 || skips[0].Round != 3 || skips[0].Limit != limit {
		t.Errorf("skips %+v, want round 3 sat out at the limit %v", skips, limit)
	}
	if len(sizes) != 1 {
		t.Errorf("reports of %d sizes, want one", len(sizes))
	}
}
