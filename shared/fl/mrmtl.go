package fl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
)

// MR-MTL (mean-regularised multi-task learning, seed 001): each client k
// keeps a personal model w_k across rounds and minimises its own loss plus
// (λ/2)·‖w_k − w̄‖², a pull towards the federated model w̄. The coordinator
// is unchanged: it averages the clients' updates w_k − w̄ into w̄ exactly as
// in DP-FedAvg (with its clipping and noise when the study has client-level
// DP). Personal models never leave the client; the LHA's forecasts come
// from its personal model.
//
// The pull is applied as its exact proximal step over the round's training
// span τ = E·lr (E local steps at learning rate lr): at the start of each
// round in which the client trains,
//
//	w_k ← argmin_w (λ/2)‖w − w̄‖² + (1/2τ)‖w − w_k‖² = (w_k + τλ·w̄)/(1 + τλ),
//
// then E local steps (full-batch Adam, or local DP-SGD) on the client's own
// loss from there; the personal model used for forecasting is the same
// proximal step towards the latest w̄. For small τλ this is, to first
// order, E explicit gradient steps on the penalty (seed 001's update);
// unlike explicit steps it is stable for every λ, and the two ends of the
// spectrum are exact: λ = 0 leaves w_k alone (local training: the client
// never uses w̄), and λ → ∞ starts every round from w̄ and forecasts with w̄
// (FedAvg). The pull reads only w̄, which is public, so it costs no privacy.

// PullFactor returns the weight 1/(1 + τλ) a personal model keeps in the
// MR-MTL pull with penalty λ ≥ 0 (λ = +Inf gives 0) over a training span
// tau = E·lr.
func PullFactor(lambda, tau float64) float64 {
	if math.IsInf(lambda, 1) {
		return 0
	}
	return 1 / (1 + tau*lambda)
}

// Pull applies the MR-MTL pull to the personal model w in place:
// w ← w̄ + (w − w̄)·PullFactor(λ, τ). λ = 0 leaves w unchanged; λ = +Inf
// makes it w̄ exactly.
func Pull(w, global []float64, lambda, tau float64) {
	if len(w) != len(global) {
		panic("fl: Pull: lengths differ")
	}
	f := PullFactor(lambda, tau)
	switch f {
	case 1:
		return
	case 0:
		copy(w, global)
		return
	}
	for i, g := range global {
		w[i] = g + (w[i]-g)*f
	}
}

// CheckLambda returns an error unless lambda is a valid MR-MTL penalty:
// a number ≥ 0 (+Inf is FedAvg's end of the spectrum).
func CheckLambda(lambda float64) error {
	if !(lambda >= 0) {
		return fmt.Errorf("%w: MR-MTL λ is %v, must be a number ≥ 0", ErrConfig, lambda)
	}
	return nil
}

// Client is one client's state across the rounds of a study: how it
// trains (the study's strategy and λ), its personal model under MR-MTL and
// its local DP-SGD with its own accountant under example-level DP. It
// holds everything a client must remember between rounds and nothing the
// coordinator needs; it is JSON-serialisable.
type Client struct {
	Strategy StrategyName `json:"strategy"`
	Lambda   float64      `json:"lambda,omitempty"`
	// Personal is the MR-MTL personal model w_k (nil until the first
	// round the client trains in, and always nil under FedAvg).
	Personal []float64 `json:"personal,omitempty"`
	// DPSGD is the client's local DP-SGD (nil: full-batch Adam, no
	// example-level DP).
	DPSGD *LocalDPSGD `json:"dpsgd,omitempty"`
}

// NewClient returns a client's state for a study with strategy st
// (FedAvg or MRMTL), MR-MTL penalty lambda, and local DP-SGD setting ex
// (nil: none).
func NewClient(st StrategyName, lambda float64, ex *ExampleDP) (*Client, error) {
	strategy, err := LookupStrategy(st)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	st = strategy.Name()
	if err := CheckLambda(lambda); err != nil {
		return nil, err
	}
	c := &Client{Strategy: st, Lambda: lambda}
	if ex != nil {
		d, err := NewLocalDPSGD(*ex)
		if err != nil {
			return nil, err
		}
		c.DPSGD = d
	}
	return c, nil
}

// Update trains the client for one round from the global model w̄ on its
// windows (x: n×H, y: n) and writes its update into dst (len(global)):
// Δ = w − w̄, clipped to cfg.ClipNorm in client-level DP mode, and returns
// ‖Δ‖ before clipping. FedAvg without local DP-SGD is exactly LocalUpdate.
// MR-MTL pulls the personal model towards w̄ (Pull with τ = E·lr), trains
// it, keeps it, and sends its difference from w̄. With local DP-SGD the E
// local steps are DP-SGD steps drawn from batches and noise; a client
// whose budget cannot cover them refuses (an error wrapping
// privacy.ErrBudgetExhausted) and changes nothing: it sends nothing that
// round. progress, if set, is called after each local step.
func (c *Client) Update(t *nn.Trainer, global, x, y []float64, cfg Config, dst []float64, batches, noise *rand.Rand, progress func(step, steps int)) (norm float64, err error) {
	if len(dst) != len(global) {
		panic("fl: Client.Update: dst and global lengths differ")
	}
	personal := c.personal()
	if !personal && c.DPSGD == nil {
		return LocalUpdateProgress(t, global, x, y, cfg, dst, progress), nil
	}
	if c.DPSGD != nil && len(y) > 0 {
		if err := c.DPSGD.Fits(cfg.LocalEpochs); err != nil {
			return 0, err
		}
	}
	w := dst
	if personal {
		if c.Personal == nil {
			c.Personal = append([]float64(nil), global...)
		}
		if len(c.Personal) != len(global) {
			return 0, fmt.Errorf("%w: the personal model has %d values, the global model %d", ErrUpdateLength, len(c.Personal), len(global))
		}
		Pull(c.Personal, global, c.Lambda, c.Tau(cfg))
		w = c.Personal
	} else {
		copy(w, global)
	}
	if len(y) > 0 {
		if c.DPSGD != nil {
			if err := c.DPSGD.Train(t, w, x, y, cfg.LocalEpochs, cfg.LearningRate, batches, noise, progress); err != nil {
				return 0, err
			}
		} else {
			t.TrainProgress(w, x, y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate}, progress)
		}
	}
	if personal {
		copy(dst, w)
	}
	for i, g := range global {
		dst[i] -= g
	}
	if cfg.DP {
		return privacy.ClipL2(dst, cfg.ClipNorm), nil
	}
	return privacy.L2Norm(dst), nil
}

// personal reports whether the client's strategy keeps a personal model
// (an unknown name, refused by NewClient, keeps none).
func (c *Client) personal() bool {
	st, err := LookupStrategy(c.Strategy)
	return err == nil && st.Personal()
}

// Tau returns the MR-MTL training span τ = E·lr of cfg.
func (c *Client) Tau(cfg Config) float64 {
	return float64(cfg.LocalEpochs) * cfg.LearningRate
}

// Model writes into dst the model the client forecasts with: under MR-MTL
// its personal model pulled towards the latest global model (the global
// model itself if it never trained), under FedAvg the global model.
func (c *Client) Model(global []float64, cfg Config, dst []float64) {
	copy(dst, global)
	if !c.personal() || c.Personal == nil {
		return
	}
	copy(dst, c.Personal)
	Pull(dst, global, c.Lambda, c.Tau(cfg))
}
