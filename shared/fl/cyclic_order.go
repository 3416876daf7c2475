package fl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
)

// CyclicOrder returns the public order of round (1-based) of a live cyclic
// study: a permutation of its n clients drawn from a generator seeded with
// SHA-256("fedcast cyclic order", seed, round). seed is public (a live
// study uses the hex SHA-256 of its study file), so anyone holding the
// study file can recompute every round's order before the study starts;
// nothing in it depends on data, arrivals or the coordinator's secret
// randomness. A fresh permutation in each round keeps any client from
// always being the last to train before a release (seed 002 draws the
// order at random for the same reason).
func CyclicOrder(seed string, round, n int) []int {
	return slices.Clone(cyclicOrder(seed, round, n))
}

func drawCyclicOrder(seed string, round, n int) []int {
	h := sha256.Sum256(fmt.Appendf(nil, "fedcast cyclic order\x00%s\x00%d", seed, round))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	return rng.Perm(n)
}

// CyclicTurn maps turn k (1-based, over the whole study: round r's turns
// are (r−1)·n+1 … r·n) to its round, its position in the round (0-based)
// and the client whose turn it is under CyclicOrder(seed, round, n).
func CyclicTurn(seed string, k, n int) (round, pos, client int) {
	round, pos = (k-1)/n+1, (k-1)%n
	return round, pos, cyclicOrder(seed, round, n)[pos]
}

// orderKey names one round's order.
type orderKey struct {
	seed     string
	round, n int
}

// orders keeps the orders drawn lately (the engine asks for the same
// round's order at every turn; simulate runs several studies at once).
var orders struct {
	sync.Mutex
	m map[orderKey][]int
}

// cyclicOrder is CyclicOrder, shared: the result must not be modified.
func cyclicOrder(seed string, round, n int) []int {
	k := orderKey{seed, round, n}
	orders.Lock()
	p, ok := orders.m[k]
	orders.Unlock()
	if ok {
		return p
	}
	p = drawCyclicOrder(seed, round, n)
	orders.Lock()
	if len(orders.m) >= 64 {
		clear(orders.m)
	}
	if orders.m == nil {
		orders.m = map[orderKey][]int{}
	}
	orders.m[k] = p
	orders.Unlock()
	return p
}
