//go:build !js

package plan

import (
	"strings"
	"testing"
)

// TestBuildNeedsPopulation: the table measures the design a study runs,
// which reads each area's public population; an outbreak without one is
// refused before anything is measured, and the synthetic outbreaks carry
// theirs.
func TestBuildNeedsPopulation(t *testing.T) {
	obs, err := SyntheticOutbreaks([]int{8}, []uint64{101})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range obs[0].Data.Regions {
		if !(obs[0].Population[r.Name] > 0) {
			t.Fatalf("synthetic area %s has no population", r.Name)
		}
	}
	delete(obs[0].Population, obs[0].Data.Regions[3].Name)
	_, err = Build(BuildOptions{Everys: []int{28}, Zs: []float64{0}, Outbreaks: obs, Seeds: []uint64{1}})
	if err == nil || !strings.Contains(err.Error(), obs[0].Data.Regions[3].Name+" has no population") {
		t.Errorf("an area without population: %v", err)
	}
}
