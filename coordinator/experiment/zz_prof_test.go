package experiment

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/series"
)

func TestZZProfCyclic(t *testing.T) {
	if os.Getenv("ZZPROF") == "" {
		t.Skip()
	}
	dir := testkit.DataDir(t)
	d, _ := series.ReadFile(filepath.Join(dir, "county_cases_daily.csv"))
	des := model.Default
	_, err := Run(context.Background(), Config{
		Data: d, From: day("2020-11-01"), To: day("2020-12-01"), Epsilons: []float64{1, 2}, Runs: 2, Seed: 1,
		History: des.History, Rounds: des.Rounds, ClientsPerRound: des.ExpectedClients(400), LocalEpochs: des.LocalEpochs, Clip: des.Clip,
		LearningRate: des.LearningRate, Hidden: des.Hidden, Features: des.Features, Damping: des.Damping, Preset: des.Name,
		StrategyOptions: StrategyOptions{Strategy: fl.Cyclic}, Workers: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
}
