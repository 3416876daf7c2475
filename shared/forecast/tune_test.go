package forecast

import (
	"fmt"
	"os"
	"testing"
)

// TestTuneCalibrator prints the grid the default constants were chosen
// from (synthetic data only). Run with FEDCAST_TUNE=1; it takes minutes.
func TestTuneCalibrator(t *testing.T) {
	if os.Getenv("FEDCAST_TUNE") == "" {
		t.Skip("set FEDCAST_TUNE=1 to print the tuning grid")
	}
	for _, lb := range []int{14} {
		for _, s0 := range []float64{0.25} {
			for _, k := range []float64{7} {
				for _, sh := range []float64{0.25, 0.5, 0.75} {
					for _, tail := range []float64{0.85, 1} {
						for _, trend := range []float64{0.5, 1} {
							c := Calibrator{Lookback: lb, PriorScale: s0, PriorWeight: k, Shift: sh, Tail: tail, Trend: trend}
							line := fmt.Sprintf("lb=%d s0=%.2f k=%2.0f shift=%.2f tail=%.2f trend=%.2f:", lb, s0, k, sh, tail, trend)
							worst95, meanRel := 1.0, 0.0
							for _, s := range scoreSynthetic(t, c, tuneScenarios, []uint64{1, 2}) {
								line += fmt.Sprintf("  %.2f/%.2f/%.2f", s.cov50, s.cov95, s.relWIS)
								worst95 = min(worst95, s.cov95)
								meanRel += s.relWIS / float64(len(tuneScenarios))
							}
							fmt.Printf("%s  worst95 %.3f meanRel %.3f\n", line, worst95, meanRel)
						}
					}
				}
			}
		}
	}
}
