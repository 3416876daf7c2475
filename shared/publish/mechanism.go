package publish

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/privacy"
)

// DefaultDelta is the δ of --publish-delta.
const DefaultDelta = 1e-6

// latticeSteps is the number of lattice steps in the largest sensitivity:
// the median is rounded to the lattice γℤ (γ = max Δ_w / latticeSteps)
// before the discrete noise, which costs at most one step of sensitivity.
const latticeSteps = 64

// Mechanism is the output noise of one publication: the median m is
// rounded to the nearest point of γℤ, and γ·N_ℤ(0, Sigma2) is added.
type Mechanism struct {
	Gamma  float64 // lattice step γ on the log scale
	Sigma2 uint64  // σ² of the discrete Gaussian, in lattice steps
	// Steps[w] is the sensitivity to one case in week w, in lattice steps:
	// ⌊Δ_w/γ⌋ + 1 (rounding to the lattice moves a value by at most one
	// more step than the value itself moved).
	Steps []int64
}

// Sigma returns the noise's standard deviation on the log scale (γ·√σ²;
// the discrete Gaussian's variance is at most σ²).
func (m Mechanism) Sigma() float64 { return m.Gamma * math.Sqrt(float64(m.Sigma2)) }

// rho returns the zero-concentrated DP ρ of one publication for a case in
// week w: the discrete Gaussian with integer sensitivity s satisfies
// ½(s/σ)²-zCDP (Canonne, Kamath, Steinke 2020), i.e. the Rényi DP of the
// Gaussian mechanism at every order.
func (m Mechanism) rho(w int) float64 {
	s := float64(m.Steps[w])
	return s * s / (2 * float64(m.Sigma2))
}

// CaseRho returns ρ of every week of one publication composed: the zCDP of
// one case over the Weeks publications that read its day.
func (m Mechanism) CaseRho() float64 {
	r := 0.0
	for w := range m.Steps {
		r += m.rho(w)
	}
	return r
}

// EpsilonOfRho converts ρ-zCDP (the Rényi DP α·ρ at every order) to ε at δ
// with the study's RDP conversion (privacy.Epsilon at q = 1: the Gaussian
// mechanism with noise multiplier 1/√(2ρ)).
func EpsilonOfRho(rho, delta float64) float64 {
	if rho <= 0 {
		return 0
	}
	eps, _ := privacy.Epsilon(1, 1/math.Sqrt(2*rho), 1, delta)
	return eps
}

// Calibrate returns the mechanism for the sensitivities sens (Forecaster.
// Sensitivity) such that one case, over the len(sens) weekly publications
// that read its day, costs at most (eps, delta): ε per person per year for
// a person with one case, since no case touches more publications.
func Calibrate(sens []float64, eps, delta float64) (Mechanism, error) {
	if err := privacy.CheckEpsilon(eps); err != nil || math.IsInf(eps, 0) {
		return Mechanism{}, fmt.Errorf("publish: --publish-epsilon %v: write a number above 0, such as 1", eps)
	}
	if err := privacy.CheckDelta(delta); err != nil {
		return Mechanism{}, fmt.Errorf("publish: --publish-delta %v: write a number between 0 and 1, such as 1e-6", delta)
	}
	top := 0.0
	for _, s := range sens {
		if !(s >= 0) || math.IsInf(s, 0) {
			return Mechanism{}, fmt.Errorf("publish: sensitivity %v is not a finite number ≥ 0", s)
		}
		top = max(top, s)
	}
	if top == 0 {
		return Mechanism{}, fmt.Errorf("publish: no sensitivity to calibrate to")
	}
	m := Mechanism{Gamma: top / latticeSteps, Steps: make([]int64, len(sens))}
	sum2 := 0.0
	for w, s := range sens {
		m.Steps[w] = int64(math.Floor(s/m.Gamma)) + 1
		sum2 += float64(m.Steps[w] * m.Steps[w])
	}
	c, err := privacy.NoiseMultiplier(eps, delta, 1, 1)
	if errors.Is(err, privacy.ErrUnreachable) {
		return Mechanism{}, fmt.Errorf("publish: --publish-epsilon %v is too small: no amount of noise reaches it at δ = %v; choose a larger ε, such as 0.1", eps, delta)
	}
	if err != nil {
		return Mechanism{}, fmt.Errorf("publish: calibrating ε = %v: %w", eps, err)
	}
	s2 := math.Ceil(c * c * sum2)
	if s2 > privacy.MaxDiscreteSigma2 {
		return Mechanism{}, fmt.Errorf("publish: --publish-epsilon %v needs more noise than the sampler draws: choose a larger ε, such as 0.1", eps)
	}
	m.Sigma2 = uint64(s2)
	return m, nil
}

// Noise returns the published median: m rounded to the lattice plus one
// draw of the discrete Gaussian, on the log scale.
func (m Mechanism) Noise(median float64, rng *rand.Rand) (float64, error) {
	g, err := privacy.NewDiscreteGaussian(m.Sigma2)
	if err != nil {
		return 0, fmt.Errorf("publish: %w", err)
	}
	if math.IsNaN(median) || math.IsInf(median, 0) {
		return 0, fmt.Errorf("publish: median %v is not a number", median)
	}
	k := math.Round(median / m.Gamma)
	return (k + float64(g.Sample(rng))) * m.Gamma, nil
}

// DefaultSpread is the public spread s₀ of the published range: the
// standard deviation of a week's forecast error on the scale log(1 +
// average), fixed in advance, not fitted to an LHA's data.
const DefaultSpread = 0.3

// Range returns the published quantiles of the next week's total from the
// noised median mt (on the scale log(κ + average)). With â = max(0,
// exp(mt) − κ) the median's daily average, the noise's standard deviation
// on the scale log(1 + average) is about σ·(κ + â)/(1 + â); level τ is
// 7·max(0, (1 + â)·exp(s·Φ⁻¹(τ)) − 1) with s = √(s₀² + (σ(κ+â)/(1+â))²).
// It reads only mt and public numbers (s₀, σ, κ), so it is post-processing.
func Range(mt, spread, sigma, kappa float64) forecast.Quantiles {
	a := max(0, math.Exp(mt)-kappa)
	s := math.Hypot(spread, sigma*(kappa+a)/(1+a))
	var q forecast.Quantiles
	for i, tau := range forecast.Levels {
		z := -math.Sqrt2 * math.Erfcinv(2*tau)
		q[i] = WeekDays * max(0, (1+a)*math.Exp(s*z)-1)
	}
	return q
}

// Accountant composes publications per case: a case on day d is read by
// the publication of origin t when d lies in the 7·Weeks days up to t,
// in week w = ⌊(t − d)/7⌋ of its window.
type Accountant struct {
	pubs []accounted
}

type accounted struct {
	origin time.Time
	m      Mechanism
}

// Add records a publication at origin with its mechanism. Publishing the
// same origin again (the stored draw) adds nothing.
func (a *Accountant) Add(origin time.Time, m Mechanism) {
	for _, p := range a.pubs {
		if p.origin.Equal(origin) {
			return
		}
	}
	a.pubs = append(a.pubs, accounted{origin, m})
}

// CaseEpsilon returns the largest ε at delta, over every day, of the
// publications that a single case on that day touches, composed (zCDP
// adds up), and that day. With publications spanning one year it is
// epsilon_per_person_year.
func (a *Accountant) CaseEpsilon(delta float64) (eps float64, day time.Time) {
	worst := -1.0
	for _, p := range a.pubs {
		for back := range WeekDays * len(p.m.Steps) {
			d := p.origin.AddDate(0, 0, -back)
			r := a.rhoOfDay(d)
			if r > worst {
				worst, day = r, d
			}
		}
	}
	if worst < 0 {
		return 0, time.Time{}
	}
	return EpsilonOfRho(worst, delta), day
}

// rhoOfDay sums ρ over the publications that read day d.
func (a *Accountant) rhoOfDay(d time.Time) float64 {
	r := 0.0
	for _, p := range a.pubs {
		back := int(math.Round(p.origin.Sub(d).Hours() / 24))
		if back < 0 || back >= WeekDays*len(p.m.Steps) {
			continue
		}
		r += p.m.rho(back / WeekDays)
	}
	return r
}

// Covers says in plain words what the guarantee of a published forecast
// covers.
const Covers = "one reported case (one more or one fewer on one day in this area); a person counted as k cases is protected about k times more weakly (ε grows about k-fold), and a case moved to another day counts as two changes"

// Marking is the DP marking of a published forecast (hub file metadata,
// text and page).
type Marking struct {
	DP                   bool    `json:"differentially_private"`
	EpsilonPerPersonYear float64 `json:"epsilon_per_person_year"`
	Delta                float64 `json:"delta"`
	Covers               string  `json:"covers"`
	// ModelSHA256 is the hex SHA-256 of the study's released (projected)
	// model the forecasts were made with; empty when the study's design is
	// not Lipschitz-bounded and the public no-change model made them.
	ModelSHA256 string `json:"model_sha256,omitempty"`
	// Model says in plain words which model made the forecasts.
	Model string `json:"model,omitempty"`
}

// The Model words of a Marking.
const (
	StudyModelWords  = "the study's shared model (Lipschitz-bounded, each layer's spectral norm at most 1)"
	PublicModelWords = "a public \"no change\" model (last week's level): this study's design is not Lipschitz-bounded, so its model cannot be published with this guarantee"
)

// ForModel returns m naming the model: the study's released model with
// hash sha (hex) when sha is not empty, otherwise the public one.
func (m Marking) ForModel(sha string) Marking {
	m.ModelSHA256 = sha
	if sha == "" {
		m.Model = PublicModelWords
	} else {
		m.Model = StudyModelWords
	}
	return m
}

// Text is the one-line marking printed under a published forecast.
func (m Marking) Text() string {
	t := fmt.Sprintf("Published with differential privacy: ε = %.3g per person per year (δ = %.0e). It protects %s.", m.EpsilonPerPersonYear, m.Delta, m.Covers)
	switch {
	case m.ModelSHA256 != "":
		t += fmt.Sprintf(" Forecast by %s, model %s.", m.Model, m.ModelSHA256)
	case m.Model != "":
		t += " Forecast by " + m.Model + "."
	}
	return t
}
