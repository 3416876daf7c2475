package protocol

import (
	"fmt"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// Study is the one type of a study's parameters that both sides read: the
// coordinator derives it from its study file (coordinator/study.File.Public)
// and sends it in the welcome; each side maps it to what it needs with the
// methods below, so that the mapping is written once.

// AccountantKind returns the study's privacy accountant (RDP when the
// coordinator named none).
func (s *Study) AccountantKind() (privacy.AccountantKind, error) {
	if s.Accountant == "" {
		return privacy.DefaultAccountant, nil
	}
	k, err := privacy.ParseAccountantKind(string(s.Accountant))
	if err != nil {
		return "", fmt.Errorf("protocol: study: %w", err)
	}
	return k, nil
}

// FLConfig returns the study's DP-FedAvg configuration (shared/fl): N, m,
// T, S, c (and the noise schedule c_1 … c_T, if any), E, the learning
// rate and the accountant, with DP on; under privacy "example" (local
// DP-SGD only) client-level DP is off: the coordinator averages the
// updates as they come, without re-clipping or noise.
func (s *Study) FLConfig() (fl.Config, error) {
	kind, err := s.AccountantKind()
	if err != nil {
		return fl.Config{}, err
	}
	cfg := fl.Config{
		Clients: s.Clients, ExpectedClients: s.ExpectedClients, Rounds: s.Rounds,
		ClipNorm: s.ClipNorm, NoiseMultiplier: s.NoiseMultiplier, DP: s.ClientLevelDP(),
		LocalEpochs: s.LocalEpochs, LearningRate: s.LearningRate, Accountant: kind,
		NoiseSchedule: slices.Clone(s.NoiseMultipliers),
	}
	if s.Features == "lipschitz" { // model.Lipschitz: trained and released spectrally bounded
		cfg.Spectral = slices.Clone(s.Layers)
	}
	return cfg, nil
}

// WindowOptions returns the study's windowing (shared/series): H, P, the
// smoothing and the date range (From and To, YYYY-MM-DD, inclusive).
func (s *Study) WindowOptions() (series.WindowOptions, error) {
	sm, err := series.ParseSmoothing(s.Smoothing)
	if err != nil {
		return series.WindowOptions{}, fmt.Errorf("protocol: study: %w", err)
	}
	opt := series.WindowOptions{History: s.History, Horizon: s.Horizon, Smoothing: sm}
	for _, d := range []struct {
		field, s string
		dst      *time.Time
	}{{"from", s.From, &opt.From}, {"to", s.To, &opt.To}} {
		if d.s != "" {
			if *d.dst, err = time.Parse(time.DateOnly, d.s); err != nil {
				return opt, fmt.Errorf("protocol: study: %s: date %q is not YYYY-MM-DD", d.field, d.s)
			}
		}
	}
	return opt, nil
}
