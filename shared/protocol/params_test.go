package protocol

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

func TestStudyMappings(t *testing.T) {
	st := Study{Clients: 20, NoiseMultiplier: 1.3,
		Settings: Settings{ExpectedClients: 5, Rounds: 7, ClipNorm: 0.5, LocalEpochs: 3,
			LearningRate: 0.01, History: 10, Horizon: 7, Smoothing: "trailing", From: "2020-03-01", To: "2020-06-30",
			RoundLength: Duration(90_000 * time.Millisecond), RoundSlack: Duration(9_000 * time.Millisecond)}}
	cfg, err := st.FLConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Clients != 20 || cfg.ExpectedClients != 5 || cfg.Rounds != 7 || cfg.ClipNorm != 0.5 || cfg.NoiseMultiplier != 1.3 ||
		cfg.LocalEpochs != 3 || cfg.LearningRate != 0.01 || !cfg.DP || cfg.Accountant != privacy.AccountantRDP {
		t.Errorf("FLConfig: %+v", cfg)
	}
	if q := cfg.SampleRate(); q != 0.25 {
		t.Errorf("q = %v, want 0.25", q)
	}
	opt, err := st.WindowOptions()
	if err != nil {
		t.Fatal(err)
	}
	want := series.WindowOptions{History: 10, Horizon: 7, Smoothing: series.Trailing,
		From: time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2020, 6, 30, 0, 0, 0, 0, time.UTC)}
	if opt != want {
		t.Errorf("WindowOptions: %+v, want %+v", opt, want)
	}
	if st.RoundLength != Duration(90*time.Second) || st.RoundSlack != Duration(9*time.Second) {
		t.Errorf("schedule %v/%v", st.RoundLength, st.RoundSlack)
	}
	for _, bad := range []Study{
		{Settings: Settings{Smoothing: "weekly"}},
		{Settings: Settings{Smoothing: "centered", From: "1 March"}},
		{Settings: Settings{Smoothing: "centered", To: "2020-13-01"}},
	} {
		if _, err := bad.WindowOptions(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := (&Study{Settings: Settings{Accountant: "moments"}}).FLConfig(); err == nil {
		t.Error("an unknown accountant was accepted")
	}
}
