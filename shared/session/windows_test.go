package session

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// TestTrainingSet: without a cap (or under it) the set is exactly
// TrainingData, in the network's terms for each feature map (the default
// design's log-change inputs included); with a cap each round is a sample
// of distinct windows of it, fresh each round.
func TestTrainingSet(t *testing.T) {
	for _, features := range []string{"counts", "log-change"} {
		t.Run(features, func(t *testing.T) { testTrainingSet(t, features) })
	}
}

func testTrainingSet(t *testing.T, features string) {
	raw, err := os.ReadFile("../../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	data, err := series.Parse(strings.NewReader(string(raw)), "lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 4, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9, LocalEpochs: 3, LearningRate: 0.01, Features: features, Hidden: []int{4}}}
	x, y, err := TrainingData(st, data)
	if err != nil {
		t.Fatal(err)
	}
	// The file's counts run in the tens to hundreds: as log-changes against
	// the last input day every input window ends in exactly 0.
	if features == "log-change" && (x[9] != 0 || x[19] != 0 || y[0] > 5) {
		t.Fatalf("TrainingData is not in log-change terms: x %v, y %v", x[:20], y[:2])
	}
	key := func(x []float64, y float64) string { return fmt.Sprint(x, y) }
	all := map[string]bool{}
	for i := range y {
		all[key(x[i*10:(i+1)*10], y[i])] = true
	}
	for _, cap := range []int{0, len(y), len(y) + 5} {
		set, err := PrepareTraining(st, data, cap, nil)
		if err != nil {
			t.Fatal(err)
		}
		gx, gy, _ := set.Round()
		if set.Total() != len(y) || set.Capped() || !slices.Equal(gx, x) || !slices.Equal(gy, y) {
			t.Errorf("cap %d: %d windows (capped %v), want all %d as TrainingData", cap, set.Total(), set.Capped(), len(y))
		}
	}
	set, err := PrepareTraining(st, data, 20, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if !set.Capped() || set.PerRound() != 20 || set.Total() != len(y) {
		t.Fatalf("capped set: per round %d of %d", set.PerRound(), set.Total())
	}
	var rounds []string
	for range 2 {
		rx, ry, err := set.Round()
		if err != nil {
			t.Fatal(err)
		}
		if len(ry) != 20 || len(rx) != 200 {
			t.Fatalf("a round of %d windows", len(ry))
		}
		seen := map[string]bool{}
		for i := range ry {
			k := key(rx[i*10:(i+1)*10], ry[i])
			if !all[k] || seen[k] {
				t.Fatalf("window %d is not a distinct training window", i)
			}
			seen[k] = true
		}
		rounds = append(rounds, fmt.Sprint(ry))
	}
	// Two samples of 20 of the file's windows agree with a chance far
	// below 1e-20: a repeat means the sample is not fresh.
	if rounds[0] == rounds[1] {
		t.Error("two rounds trained on the same sample")
	}
	if d, err := EstimateRound(st, set); err != nil || d <= 0 {
		t.Errorf("estimate %v, %v", d, err)
	}
}
