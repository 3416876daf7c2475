package fl

import (
	"context"
	"fmt"
	"runtime"
)

// ClientData is one client's training windows: X is n×H row-major, Y has n
// targets. The privacy unit is the client, however many windows it holds.
type ClientData struct {
	X, Y []float64
}

// A Pool is a fixed number of slots for goroutines that train clients,
// shared by the simulations of one experiment: each run holds one slot
// while it runs, and a run takes free slots for helpers round by round, so
// one run alone uses every core and many runs never oversubscribe them.
// A Pool is safe for concurrent use.
type Pool struct {
	slots chan struct{}
}

// NewPool returns a pool of n slots; n < 1 means runtime.GOMAXPROCS(0).
func NewPool(n int) *Pool {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Pool{slots: make(chan struct{}, n)}
}

// Size returns the number of slots.
func (p *Pool) Size() int { return cap(p.slots) }

// Acquire takes a slot, waiting until one is free or ctx is done (then it
// returns ctx's error and holds no slot).
func (p *Pool) Acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot if one is free and reports whether it did.
func (p *Pool) TryAcquire() bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release returns a slot taken by Acquire or TryAcquire.
func (p *Pool) Release() { <-p.slots }

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, a...)...)
}
