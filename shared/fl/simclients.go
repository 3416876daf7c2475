package fl

import "github.com/fedcast/fedcast/shared/nn"

// newClientStates makes every client's state when the simulation needs
// one (MR-MTL, or local DP-SGD); FedAvg without local DP-SGD keeps none
// and trains exactly as LocalUpdate.
func (s *Simulation) newClientStates() error {
	s.ClientStates = nil
	if (s.Strategy == "" || s.Strategy == FedAvg) && s.Example == nil {
		return nil
	}
	if err := CheckLambda(s.Lambda); err != nil {
		return err
	}
	states := make([]*Client, len(s.Clients))
	for i := range states {
		c, err := NewClient(s.Strategy, s.Lambda, s.Example)
		if err != nil {
			return err
		}
		states[i] = c
	}
	s.ClientStates = states
	return nil
}

// clientUpdate trains client k in round round (1-based) through its state,
// with local DP-SGD randomness from ClientRand (independent per client and
// round). A non-nil error is the client's refusal (its own budget).
func (s *Simulation) clientUpdate(t *nn.Trainer, global []float64, round, k int, dst []float64) error {
	d := s.Clients[k]
	_, err := s.ClientStates[k].Update(t, global, d.X, d.Y, s.Config, dst,
		ClientRand(s.Seed, StreamExampleBatches, k, round), ClientRand(s.Seed, StreamExampleNoise, k, round), nil)
	return err
}

// PersonalModel writes into dst the model client k forecasts with after
// Run: its MR-MTL personal model pulled towards global, or global.
func (s *Simulation) PersonalModel(k int, global, dst []float64) {
	if s.ClientStates == nil {
		copy(dst, global)
		return
	}
	s.ClientStates[k].Model(global, s.Config, dst)
}
