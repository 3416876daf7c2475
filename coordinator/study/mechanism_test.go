package study

import (
	"path/filepath"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// TestLedgerRecordsMechanism: every committed DP round records the lattice
// step γ the aggregator used and the noise sampler's name in the ledger.
func TestLedgerRecordsMechanism(t *testing.T) {
	const n = 8
	f, raw, _ := small(t, n)
	data := clientData(n, f.History)
	seed := uint64(5)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "ledger.db"), &seed)
	play(t, e, data, 2)
	lat, err := privacy.NewLattice(e.Config.ClipNorm, e.Config.NoiseMultiplier)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := ledgerOf(e).Rounds()
	if err != nil || len(rs) != 2 {
		t.Fatalf("ledger rounds: %d, %v", len(rs), err)
	}
	for _, r := range rs {
		if r.Gamma != lat.Gamma || r.Sampler != privacy.SamplerName {
			t.Errorf("round %d recorded γ = %v, sampler %q; want %v, %q", r.Round, r.Gamma, r.Sampler, lat.Gamma, privacy.SamplerName)
		}
	}
}
