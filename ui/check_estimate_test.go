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
		got, err := estimateRound(protocol.Study{}, nil)
		if err != nil || got != tc.want {
			t.Errorf("timings %v: estimate %v (%v), want %v", tc.timings, got, err, tc.want)
		}
	}
}
