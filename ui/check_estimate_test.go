package ui

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// TestEstimateRoundIsAMedian: one slow timing (a garbage collection, code
// the browser has not optimised yet) does not make the estimate before
// joining, nor one fast timing.
func TestEstimateRoundIsAMedian(t *testing.T) {
	defer func(f func(protocol.Study, *session.TrainingSet) (time.Duration, error)) { roundTimer = f }(roundTimer)
	for _, tc := range []struct {
		timings []time.Duration
		want    time.Duration
	}{
		{[]time.Duration{3 * time.Second, 300 * time.Millisecond, 280 * time.Millisecond}, 300 * time.Millisecond},
		{[]time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 320 * time.Millisecond}, 300 * time.Millisecond},
	} {
		i := 0
		roundTimer = func(protocol.Study, *session.TrainingSet) (time.Duration, error) {
			i++
			return tc.timings[(i-1)%len(tc.timings)], nil
		}
		got, err := estimateRound(protocol.Study{}, nil, 0)
		if err != nil || got != tc.want*5/4 {
			t.Errorf("timings %v: estimate %v (%v), want %v", tc.timings, got, err, tc.want)
		}
	}
}

// TestEstimateCountsRenders: the estimate adds the renders training makes
// (first and last step, at most a fifth of the time between), measured
// when the file was shown: with a page that takes 250 ms to render, 0.4 s
// of training is a round of about a second, not 0.4 s.
func TestEstimateCountsRenders(t *testing.T) {
	defer func(f func(protocol.Study, *session.TrainingSet) (time.Duration, error)) { roundTimer = f }(roundTimer)
	roundTimer = func(protocol.Study, *session.TrainingSet) (time.Duration, error) { return 400 * time.Millisecond, nil }
	got, err := estimateRound(protocol.Study{}, nil, 250*time.Millisecond)
	if want := 500*time.Millisecond + 500*time.Millisecond; err != nil || got != want {
		t.Errorf("estimate %v (%v), want %v", got, err, want)
	}
	// LoadFile measures what showing the file took to render.
	env := &slowRenderEnv{render: 40 * time.Millisecond}
	s := &JoinState{Env: env, Yield: env.yield}
	s.LoadFile("lha.csv", []byte("date,region,cases\n2020-11-01,A,1\n2020-11-02,A,2\n"))
	if s.renderCost < 40*time.Millisecond {
		t.Errorf("render cost after loading %v, want at least the 40 ms render", s.renderCost)
	}
}
