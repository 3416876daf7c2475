package e2e

import (
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// BenchmarkLocalRoundNative is one LHA round natively on the e2e fixture
// (both areas of testdata/lha.csv, the default 10-128-64-32-1 model, 30
// full-batch Adam steps, clipping): the native counterpart of the time
// the LHA page shows after each round in Chromium (docs/browser.md).
func BenchmarkLocalRoundNative(b *testing.B) {
	f, _, err := study.Create(study.CreateOptions{Template: study.File{Settings: protocol.Settings{Epsilon: 3, Rounds: 4, ExpectedClients: 1}}, Names: []string{"a"}})
	if err != nil {
		b.Fatal(err)
	}
	c, err := f.Calibrate()
	if err != nil {
		b.Fatal(err)
	}
	st := f.Public(c, false)
	d, err := series.ReadFile("testdata/lha.csv")
	if err != nil {
		b.Fatal(err)
	}
	x, y, err := session.TrainingData(st, d)
	if err != nil {
		b.Fatal(err)
	}
	m := nn.NewMLP(st.Layers...)
	global := make([]float64, m.NumParams())
	m.Init(global, privacy.NewSecureRand())
	cfg := f.Config(c)
	tr := nn.NewTrainer(m)
	dst := make([]float64, len(global))
	b.ResetTimer()
	for range b.N {
		fl.LocalUpdate(tr, global, x, y, cfg, dst)
	}
	b.ReportMetric(float64(len(y)), "windows")
}
