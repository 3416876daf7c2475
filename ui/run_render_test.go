package ui

import (
	"sync"
	"testing"
	"time"
)

// slowRenderEnv plays a browser whose page takes render to rebuild: a
// render asked for with UnlockRender runs at the next Yield, as the
// renderer's goroutine runs while the training goroutine waits for the
// browser's timer.
type slowRenderEnv struct {
	sync.RWMutex
	render  time.Duration
	pending bool
	renders int
	spent   time.Duration
}

func (e *slowRenderEnv) UnlockOnly()   { e.Unlock() }
func (e *slowRenderEnv) UnlockRender() { e.pending = true; e.Unlock() }

func (e *slowRenderEnv) yield() {
	if e.pending {
		e.pending = false
		e.renders++
		start := time.Now()
		time.Sleep(e.render)
		e.spent += time.Since(start)
	}
}

// TestProgressRendersLessOnASlowPage: on a computer where the page takes
// longer to render than a training step takes, rendering does not swamp
// the round (a 4× CPU slowdown in Chromium with a 400-area file: a render
// every 100 ms made 0.3 s of training last 4 to 12 s). Rendering may take
// at most about a fifth of the round, besides the first and last step's.
func TestProgressRendersLessOnASlowPage(t *testing.T) {
	const steps, step, render = 80, 5 * time.Millisecond, 60 * time.Millisecond
	env := &slowRenderEnv{render: render}
	s := &JoinState{Env: env, Yield: env.yield}
	start := time.Now()
	for i := 0; i <= steps; i++ {
		s.Progress(1, i, steps)
		if i < steps {
			time.Sleep(step) // the step's own work
		}
	}
	total := time.Since(start)
	middle := env.spent - 2*render // the first and last step's renders are always made
	t.Logf("%d renders, %v of %v rendering", env.renders, env.spent.Round(time.Millisecond), total.Round(time.Millisecond))
	if frac := float64(middle) / float64(total); frac > 0.3 {
		t.Errorf("rendering took %.0f %% of the round (%d renders of %v for %d steps of %v)", 100*frac, env.renders, render, steps, step)
	}
	if env.renders < 3 {
		t.Errorf("%d renders: the progress bar should still move during the round", env.renders)
	}
	if s.Step != steps || s.TrainTime == 0 {
		t.Errorf("step %d of %d, train time %v", s.Step, s.Steps, s.TrainTime)
	}
}
