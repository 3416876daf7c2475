package secagg

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/cryptotest"

	"github.com/fedcast/fedcast/shared/privacy"
)

// run is one round of the two-server protocol in process: every LHA i
// shares ks[i], the helper opens and sums, the leader sums the
// intersection, each adds the given noise, and the leader combines.
func run(t *testing.T, key *PrivateKey, ks [][]int64, noiseL, noiseH []int64) []int64 {
	t.Helper()
	d := len(noiseL)
	byID := map[ReportID]*Report{}
	var fwd []Sealed
	for i, k := range ks {
		r, err := NewReport(key.PublicKey(), testStudy, 3, uint32(i), k)
		if err != nil {
			t.Fatal(err)
		}
		byID[r.ID] = r
		fwd = append(fwd, Sealed{r.ID, r.SealedSeed})
	}
	hs, kept, rej := HelperSum(key, testStudy, 3, len(ks), d, fwd)
	if len(rej) != 0 || len(kept) != len(ks) {
		t.Fatalf("helper kept %d of %d, rejected %v", len(kept), len(ks), rej)
	}
	hs.AddNoiseVector(noiseH)
	ls, err := LeaderSum(byID, kept, d)
	if err != nil {
		t.Fatal(err)
	}
	ls.AddNoiseVector(noiseL)
	z := make([]int64, d)
	Combine(z, ls.Share(), hs.Share(), Ring64)
	return z
}

func TestTwoServersSumExactly(t *testing.T) {
	e := testEncoder(t)
	key := testKey(t)
	rng := rand.New(rand.NewPCG(1, 2))
	const d, n = 241, 7
	want := make([]int64, d)
	var ks [][]int64
	for i := range n {
		k := make([]int64, d)
		e.Encode(k, randomUpdate(rng, d, 0.3+0.2*float64(i)))
		if err := e.CheckEncoded(k); err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
		for j, v := range k {
			want[j] += v
		}
	}
	nl, nh := make([]int64, d), make([]int64, d)
	e.Noise().AddTo(nl, rng)
	e.Noise().AddTo(nh, rng)
	for j := range want {
		want[j] += nl[j] + nh[j]
	}
	if got := run(t, key, ks, nl, nh); !slices.Equal(got, want) {
		t.Fatalf("combined sum differs from Σk + noise: first %v, want %v", got[:4], want[:4])
	}
}

func TestEncodeNormBound(t *testing.T) {
	e := testEncoder(t)
	rng := rand.New(rand.NewPCG(3, 4))
	b := e.B()
	for _, d := range []int{1, 2, 241, 11777} {
		for _, norm := range []float64{0, 0.01, 0.4999, 0.5, 0.7, 50} {
			k := make([]int64, d)
			e.Encode(k, randomUpdate(rng, d, norm))
			if err := e.CheckEncoded(k); err != nil {
				t.Fatalf("d=%d norm=%g: %v", d, norm, err)
			}
			var n2 uint64
			for _, z := range k {
				n2 += uint64(z * z)
			}
			if n2 > uint64(b*b) {
				t.Fatalf("d=%d norm=%g: Σk² = %d > B² = %d", d, norm, n2, b*b)
			}
			if norm >= 0.5 && float64(n2) < 0.98*float64(b*b) {
				t.Errorf("d=%d norm=%g: Σk² = %d, far below B² = %d: encoding shrank a clipped update too much", d, norm, n2, b*b)
			}
		}
	}
	// A coordinate of exactly S is within a step of B (Round aims just
	// inside the bound), and beyond S it is clipped.
	k := make([]int64, 1)
	for _, u := range []float64{0.5, 3, -0.5} {
		e.Encode(k, []float64{u})
		if a := max(k[0], -k[0]); a > b || a < b-1 {
			t.Errorf("Encode(%g) = %d, want ±B or ±(B−1) with B = %d", u, k[0], b)
		}
	}
	if err := e.CheckEncoded([]int64{b + 1}); err == nil {
		t.Error("CheckEncoded accepted B+1")
	}
	if err := e.CheckEncoded([]int64{b, 1}); err == nil {
		t.Error("CheckEncoded accepted a norm above B")
	}
}

// The helper's view of a report (ID and sealed seed) and of the round (its
// aggregate share) is byte-identical for two different updates when the
// seeds, IDs and the sealing randomness are fixed.
func TestCuriousHelperViewIndependentOfUpdate(t *testing.T) {
	e := testEncoder(t)
	key := testKey(t)
	const d = 241
	rng := rand.New(rand.NewPCG(5, 6))
	updates := [2][][]float64{}
	for v := range updates {
		for range 3 {
			updates[v] = append(updates[v], randomUpdate(rng, d, 0.5))
		}
	}
	views := [2][]byte{}
	leaderViews := [2][]byte{}
	for v := range updates {
		t.Run("", func(t *testing.T) {
			cryptotest.SetGlobalRandom(t, 42) // HPKE's ephemeral keys
			var view, lview bytes.Buffer
			var fwd []Sealed
			for i, u := range updates[v] {
				k := make([]int64, d)
				e.Encode(k, u)
				r, err := newReport(key.PublicKey(), testStudy, 1, idFor(i), seedFor(i), k)
				if err != nil {
					t.Fatal(err)
				}
				fwd = append(fwd, Sealed{r.ID, r.SealedSeed})
				view.Write(r.ID[:])
				view.Write(r.SealedSeed)
				lview.Write(r.Marshal())
			}
			hs, kept, _ := HelperSum(key, testStudy, 1, 3, d, fwd)
			hs.AddNoise(e.Noise(), rand.New(rand.NewPCG(7, 8)))
			for _, id := range kept {
				view.Write(id[:])
			}
			for _, w := range hs.Share() {
				view.Write([]byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24), byte(w >> 32), byte(w >> 40), byte(w >> 48), byte(w >> 56)})
			}
			views[v], leaderViews[v] = view.Bytes(), lview.Bytes()
		})
	}
	if len(views[0]) == 0 || !bytes.Equal(views[0], views[1]) {
		t.Fatal("the helper's view differs between two different updates")
	}
	if bytes.Equal(leaderViews[0], leaderViews[1]) {
		t.Fatal("the leader's reports are equal for different updates: the test does not exercise the update")
	}
}

// On ℤ_{2^8} with d = 1, the leader's share k − h over all 256 masks h is
// the same multiset for every k: the share says nothing about k.
func TestReducedRingLeaderShareUniform(t *testing.T) {
	r, err := NewRing(8)
	if err != nil {
		t.Fatal(err)
	}
	multiset := func(k int64) []uint64 {
		var out []uint64
		for h := range uint64(256) {
			s := make([]uint64, 1)
			Split(s, []int64{k}, []uint64{h}, r)
			out = append(out, s[0])
		}
		slices.Sort(out)
		return out
	}
	ref := multiset(0)
	for _, k := range []int64{1, -1, 5, 127, -128, 100, -77} {
		if got := multiset(k); !slices.Equal(got, ref) {
			t.Fatalf("k=%d: leader shares differ from k=0's", k)
		}
	}
	// And every element appears exactly once.
	for i, v := range ref {
		if v != uint64(i) {
			t.Fatalf("share multiset is not the whole ring: position %d holds %d", i, v)
		}
	}
}

// A simulator that knows only Σk plus the other server's noise (and the
// server's own randomness) produces each server's whole view with the same
// distribution: enumerated exactly on ℤ_{2^8}, two LHAs, d = 1, masks
// modelling the XOF as uniform.
func TestSimulatorReproducesEachServersView(t *testing.T) {
	r, _ := NewRing(8)
	type view [3]uint64
	for _, c := range []struct{ k1, k2, nl, nh int64 }{{3, -5, 7, -2}, {-9, 0, 0, 11}, {60, 60, -100, 90}} {
		var realL, simL, realH, simH []view
		for h1 := range uint64(256) {
			for h2 := range uint64(256) {
				l1 := r.Reduce(r.FromInt(c.k1) - h1)
				l2 := r.Reduce(r.FromInt(c.k2) - h2)
				// Leader: its two shares and the helper's aggregate share.
				realL = append(realL, view{l1, l2, r.Reduce(h1 + h2 + r.FromInt(c.nh))})
				// Helper: the two masks and the leader's aggregate share.
				realH = append(realH, view{h1, h2, r.Reduce(l1 + l2 + r.FromInt(c.nl))})
				// Simulators: uniform r1, r2 (enumerated as h1, h2).
				sumH := r.FromInt(c.k1 + c.k2 + c.nh)
				simL = append(simL, view{h1, h2, r.Reduce(sumH - h1 - h2)})
				sumL := r.FromInt(c.k1 + c.k2 + c.nl)
				simH = append(simH, view{h1, h2, r.Reduce(sumL - h1 - h2)})
			}
		}
		cmp := func(a, b view) int { return slices.Compare(a[:], b[:]) }
		for _, p := range [][2][]view{{realL, simL}, {realH, simH}} {
			slices.SortFunc(p[0], cmp)
			slices.SortFunc(p[1], cmp)
			if !slices.Equal(p[0], p[1]) {
				t.Fatalf("%+v: a server's real view and the simulated one differ", c)
			}
		}
	}
}

// In ℤ_{2^64}, the helper's whole view is reproduced byte for byte by a
// simulator given its key, the sealed seeds and Σk + the leader's noise.
func TestSimulatorHelperExact(t *testing.T) {
	e := testEncoder(t)
	key := testKey(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const d, n = 64, 4
	sum := make([]int64, d)
	byID := map[ReportID]*Report{}
	var fwd []Sealed
	for i := range n {
		k := make([]int64, d)
		e.Encode(k, randomUpdate(rng, d, 0.5))
		for j := range k {
			sum[j] += k[j]
		}
		rep, err := NewReport(key.PublicKey(), testStudy, 2, uint32(i), k)
		if err != nil {
			t.Fatal(err)
		}
		byID[rep.ID] = rep
		fwd = append(fwd, Sealed{rep.ID, rep.SealedSeed})
	}
	hs, kept, _ := HelperSum(key, testStudy, 2, n, d, fwd)
	ls, err := LeaderSum(byID, kept, d)
	if err != nil {
		t.Fatal(err)
	}
	nl := ls.AddNoise(e.Noise(), rng)
	hs.AddNoise(e.Noise(), rng)
	realLeaderShare := ls.Share()
	// Simulator: Σk + nL, minus the masks the helper can expand itself.
	given := make([]int64, d)
	for j := range given {
		given[j] = sum[j] + nl[j]
	}
	sim := NewSum(Ring64, d)
	buf := make([]uint64, d)
	for _, f := range fwd {
		seed, err := key.Open(f.SealedSeed, AssociatedData(testStudy, 2, f.ID))
		if err != nil {
			t.Fatal(err)
		}
		Expand(buf, seed, Ring64)
		for j := range buf {
			buf[j] = -buf[j]
		}
		sim.Add(buf)
	}
	sim.AddNoiseVector(given)
	if !slices.Equal(sim.Share(), realLeaderShare) {
		t.Fatal("the simulated leader aggregate share differs from the real one")
	}
}

func TestOpenFailureLeavesBothSums(t *testing.T) {
	key := testKey(t)
	other := testKey(t)
	const d = 8
	k := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	good, _ := NewReport(key.PublicKey(), testStudy, 5, 0, k)
	wrongKey, _ := NewReport(other.PublicKey(), testStudy, 5, 1, k)
	wrongStudy, _ := NewReport(key.PublicKey(), [32]byte{9}, 5, 2, k)
	wrongRound, _ := NewReport(key.PublicKey(), testStudy, 4, 3, k)
	tampered, _ := NewReport(key.PublicKey(), testStudy, 5, 4, k)
	tampered.SealedSeed[40] ^= 1
	dup, _ := NewReport(key.PublicKey(), testStudy, 5, 0, k)
	outside, _ := NewReport(key.PublicKey(), testStudy, 5, 99, k)
	all := []*Report{good, wrongKey, wrongStudy, wrongRound, tampered, dup, outside}
	byID := map[ReportID]*Report{}
	var fwd []Sealed
	for _, r := range all {
		byID[r.ID] = r
		fwd = append(fwd, Sealed{r.ID, r.SealedSeed})
	}
	hs, kept, rej := HelperSum(key, testStudy, 5, 10, d, fwd)
	if !slices.Equal(kept, []ReportID{good.ID}) {
		t.Fatalf("kept %v, want only the good report", kept)
	}
	wantErr := []error{ErrOpen, ErrOpen, ErrOpen, ErrOpen, ErrDuplicate, ErrClient}
	if len(rej) != len(wantErr) {
		t.Fatalf("rejected %d, want %d", len(rej), len(wantErr))
	}
	for i, r := range rej {
		if !errors.Is(r.Err, wantErr[i]) {
			t.Errorf("rejection %d: %v, want %v", i, r.Err, wantErr[i])
		}
	}
	ls, err := LeaderSum(byID, kept, d)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]int64, d)
	hs.AddNoiseVector(zero)
	ls.AddNoiseVector(zero)
	z := make([]int64, d)
	Combine(z, ls.Share(), hs.Share(), Ring64)
	if !slices.Equal(z, k) {
		t.Fatalf("sum %v, want only the good report %v", z, k)
	}
	if _, err := LeaderSum(byID, []ReportID{good.ID, good.ID}, d); !errors.Is(err, ErrNotForwarded) {
		t.Errorf("LeaderSum with a repeated ID: %v", err)
	}
	if _, err := LeaderSum(byID, []ReportID{idFor(77)}, d); !errors.Is(err, ErrNotForwarded) {
		t.Errorf("LeaderSum with an unknown ID: %v", err)
	}
}

func TestSumRefusesReleaseWithoutNoise(t *testing.T) {
	s := NewSum(Ring64, 2)
	mustPanic(t, "Share before noise", func() { s.Share() })
	s.AddNoiseVector([]int64{0, 0})
	mustPanic(t, "noise twice", func() { s.AddNoiseVector([]int64{0, 0}) })
	mustPanic(t, "Add after noise", func() { s.Add([]uint64{0, 0}) })
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

func TestNoiseIsTheLatticeSampler(t *testing.T) {
	e := testEncoder(t)
	lat, _ := privacy.NewLattice(0.5, 1)
	if e.Gamma() != lat.Gamma || e.Sigma2() != lat.Sigma2 || e.B() != lat.MaxCoord {
		t.Fatalf("encoder (γ=%g σ²=%d B=%d) differs from the lattice (γ=%g σ²=%d B=%d)",
			e.Gamma(), e.Sigma2(), e.B(), lat.Gamma, lat.Sigma2, lat.MaxCoord)
	}
}
