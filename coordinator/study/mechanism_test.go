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
	st := ledgerState(t, e)
	if len(st.Events) != 2 || len(st.Mechanisms) != 2 {
		t.Fatalf("ledger rounds: %d, mechanisms %d", len(st.Events), len(st.Mechanisms))
	}
	for i, r := range st.Mechanisms {
		if r.Gamma != lat.Gamma || r.Sampler != privacy.SamplerName {
			t.Errorf("round %d recorded γ = %v, sampler %q; want %v, %q", st.Events[i].Round, r.Gamma, r.Sampler, lat.Gamma, privacy.SamplerName)
		}
	}
}
