package secagg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A Sum is one server's running sum of shares in a ring, to which the
// server adds its own noise once before releasing it as its aggregate
// share. The zero value is not usable; use NewSum.
type Sum struct {
	ring  Ring
	acc   []uint64
	n     int
	noisy bool
}

// NewSum returns an empty sum of d coordinates in r.
func NewSum(r Ring, d int) *Sum { return &Sum{ring: r, acc: make([]uint64, d)} }

// Add adds one share. It panics if the length is wrong or after AddNoise.
func (s *Sum) Add(share []uint64) {
	if len(share) != len(s.acc) {
		panic("secagg: Sum.Add: wrong length")
	}
	if s.noisy {
		panic("secagg: Sum.Add after AddNoise")
	}
	for j, v := range share {
		s.acc[j] += v
	}
	s.n++
}

// AddSeed adds the helper's share expanded from seed (Expand), using buf
// (length d) as scratch.
func (s *Sum) AddSeed(seed Seed, buf []uint64) {
	Expand(buf, seed, s.ring)
	s.Add(buf)
}

// AddNoiseVector adds the integer vector z (a server's noise) to the sum.
// A sum takes noise once; a second call panics.
func (s *Sum) AddNoiseVector(z []int64) {
	if len(z) != len(s.acc) {
		panic("secagg: Sum.AddNoiseVector: wrong length")
	}
	if s.noisy {
		panic("secagg: Sum: noise added twice")
	}
	for j, v := range z {
		s.acc[j] += s.ring.FromInt(v)
	}
	s.noisy = true
}

// AddNoise draws independent N_ℤ(0, σ²) noise on every coordinate from g
// with rng (the server's own CSPRNG, privacy.NewSecureRand, in a study)
// and adds it (AddNoiseVector). It returns the noise, which the server
// keeps to itself.
func (s *Sum) AddNoise(g *privacy.DiscreteGaussian, rng *rand.Rand) []int64 {
	z := make([]int64, len(s.acc))
	g.AddTo(z, rng)
	s.AddNoiseVector(z)
	return z
}

// Share returns the aggregate share: the sum of the shares plus the noise,
// reduced into the ring. It panics if no noise was added: a server never
// releases a sum without its noise.
func (s *Sum) Share() []uint64 {
	if !s.noisy {
		panic("secagg: Sum.Share before AddNoise")
	}
	out := make([]uint64, len(s.acc))
	for j, v := range s.acc {
		out[j] = s.ring.Reduce(v)
	}
	return out
}

// Combine writes to dst the centred lift of leader + helper in r: the
// noised integer sum Σk + noise_leader + noise_helper, exact when the
// study passed CheckWrap. It panics if the lengths differ.
func Combine(dst []int64, leader, helper []uint64, r Ring) {
	if len(dst) != len(leader) || len(helper) != len(leader) {
		panic("secagg: Combine: lengths differ")
	}
	for j := range dst {
		dst[j] = r.Lift(leader[j] + helper[j])
	}
}

// Decode adds the combined sum z, in lattice steps of gamma, divided by
// m (the expected number of LHAs per round, qN), to global: global_j +=
// z_j·(γ/m), the same arithmetic as the single-coordinator round
// (fl.Aggregator.Finish). It panics if the lengths differ.
func Decode(global []float64, z []int64, gamma float64, m int) {
	if len(global) != len(z) {
		panic("secagg: Decode: lengths differ")
	}
	step := gamma / float64(m)
	for j, v := range z {
		global[j] += float64(v) * step
	}
}

// A Sealed is what the leader forwards to the helper for one report.
type Sealed struct {
	ID         ReportID `json:"id"`
	SealedSeed []byte   `json:"sealed_seed"` // base64 in JSON
}

// ErrDuplicate is wrapped in HelperSum's reasons for a report whose LHA
// already has a report in the round, or whose ID repeats.
var ErrDuplicate = errors.New("secagg: a second report from the same LHA in this round")

// ErrClient is wrapped for a report whose LHA number is not below the
// study's number of LHAs.
var ErrClient = errors.New("secagg: the report names an LHA the study does not have")

// Rejected says why the helper left a report out of its sum.
type Rejected struct {
	ID  ReportID
	Err error
}

// HelperSum is the helper's work for one round before noise: it opens
// every sealed seed with associated data (study, round, ID), keeps the
// first report of each LHA number below clients whose seed opens, and sums
// the expanded seeds of the kept reports in ℤ_{2^64}. It returns the sum
// (noise still to add), the IDs kept, in order (the leader must sum its
// shares of exactly these: the intersection), and why each other report
// was left out. Its result depends only on its inputs and the key.
func HelperSum(k *PrivateKey, study [32]byte, round, clients, d int, reports []Sealed) (*Sum, []ReportID, []Rejected) {
	sum := NewSum(Ring64, d)
	buf := make([]uint64, d)
	seen := make(map[uint32]bool, len(reports))
	var kept []ReportID
	var rejected []Rejected
	for _, r := range reports {
		c := r.ID.Client()
		switch {
		case int64(c) >= int64(clients):
			rejected = append(rejected, Rejected{r.ID, fmt.Errorf("%w: LHA number %d, the study has %d", ErrClient, c, clients)})
			continue
		case seen[c]:
			rejected = append(rejected, Rejected{r.ID, fmt.Errorf("%w: LHA number %d", ErrDuplicate, c)})
			continue
		}
		seed, err := k.Open(r.SealedSeed, AssociatedData(study, round, r.ID))
		if err != nil {
			rejected = append(rejected, Rejected{r.ID, err})
			continue
		}
		seen[c] = true
		sum.AddSeed(seed, buf)
		kept = append(kept, r.ID)
	}
	return sum, kept, rejected
}

// ErrNotForwarded is returned by LeaderSum when the helper kept a report
// the leader does not hold.
var ErrNotForwarded = errors.New("secagg: the helper kept a report the leader does not hold")

// LeaderSum sums the leader's shares of exactly the reports the helper
// kept (the intersection), in the helper's order. byID holds the leader's
// reports of the round. Noise is still to add.
func LeaderSum(byID map[ReportID]*Report, kept []ReportID, d int) (*Sum, error) {
	sum := NewSum(Ring64, d)
	seen := make(map[ReportID]bool, len(kept))
	for _, id := range kept {
		r, ok := byID[id]
		if !ok || seen[id] {
			return nil, fmt.Errorf("%w: %s", ErrNotForwarded, id)
		}
		seen[id] = true
		sum.Add(r.Leader)
	}
	return sum, nil
}

// MarshalShare returns an aggregate share's bytes: its words in
// little-endian order.
func MarshalShare(share []uint64) []byte {
	b := make([]byte, 8*len(share))
	for j, v := range share {
		binary.LittleEndian.PutUint64(b[8*j:], v)
	}
	return b
}

// UnmarshalShare reads an aggregate share of d words.
func UnmarshalShare(b []byte, d int) ([]uint64, error) {
	if len(b) != 8*d {
		return nil, fmt.Errorf("secagg: aggregate share of %d bytes, want %d for %d parameters", len(b), 8*d, d)
	}
	out := make([]uint64, d)
	for j := range out {
		out[j] = binary.LittleEndian.Uint64(b[8*j:])
	}
	return out, nil
}

// CombineLeader is the leader's end of a round: it sums its shares of
// exactly the reports the helper kept (the intersection), adds its own
// noise (drawn by the caller from the leader's own generator at the
// round's σ), adds the helper's aggregate share (MarshalShare bytes) and
// returns the centred lift: Σk + noise_leader + noise_helper in lattice
// steps. The caller divides by m (Decode).
func CombineLeader(kept []ReportID, helperShare []byte, reports []*Report, noise []int64) ([]int64, error) {
	d := len(noise)
	byID := make(map[ReportID]*Report, len(reports))
	for _, r := range reports {
		byID[r.ID] = r
	}
	ls, err := LeaderSum(byID, kept, d)
	if err != nil {
		return nil, err
	}
	ls.AddNoiseVector(noise)
	hs, err := UnmarshalShare(helperShare, d)
	if err != nil {
		return nil, err
	}
	z := make([]int64, d)
	Combine(z, ls.Share(), hs, Ring64)
	return z, nil
}
