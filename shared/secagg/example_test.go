package secagg_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/secagg"
)

// One round with two LHAs: each splits its encoded update between the
// servers; the helper opens the seeds and sums; the leader sums the
// intersection; each adds its noise (zero here, to show the exact sum);
// the leader combines.
func Example() {
	key, _ := secagg.GenerateKey() // the helper's; LHAs know key.PublicKey()
	enc, _ := secagg.NewEncoder(0.5, 1)
	study := [32]byte{} // protocol.Study.Hash of the study
	byID := map[secagg.ReportID]*secagg.Report{}
	var forwarded []secagg.Sealed
	for i, u := range [][]float64{{0.1, -0.2, 0}, {0.05, 0.05, 0.3}} {
		k := make([]int64, len(u))
		enc.Encode(k, u)
		r, _ := secagg.NewReport(key.PublicKey(), study, 1, uint32(i), k)
		byID[r.ID] = r
		forwarded = append(forwarded, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	helper, kept, _ := secagg.HelperSum(key, study, 1, 2, 3, forwarded)
	helper.AddNoiseVector(make([]int64, 3))
	leader, _ := secagg.LeaderSum(byID, kept, 3)
	leader.AddNoiseVector(make([]int64, 3))
	z := make([]int64, 3)
	secagg.Combine(z, leader.Share(), helper.Share(), secagg.Ring64)
	global := make([]float64, 3)
	secagg.Decode(global, z, enc.Gamma(), 1)
	fmt.Printf("kept %d reports; sum %.4f\n", len(kept), global)
	// Output: kept 2 reports; sum [0.1500 -0.1500 0.3000]
}
