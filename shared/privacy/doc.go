// Package privacy holds fedcast's differential-privacy primitives for
// DP-FedAvg with client-level DP (spec §5, §6): parameter checks, L2
// clipping, the lattice γℤᵈ and the exact discrete Gaussian sampler that
// make a round's noise (Lattice, DiscreteGaussian), the Rényi-DP accountant
// of the Sampled Gaussian Mechanism and noise calibration.
//
// # Model and units
//
// One round releases w + (1/m)·Σ clip_S(Δwᵢ) + N(0, σ²I) over a Poisson
// sample of the N clients (each independently with probability q = m/N),
// with σ = c·S/m. Dividing by the expected m keeps the L2 sensitivity at
// S/m under add/remove (zero-out) adjacency, so in units of the sensitivity
// this is the Sampled Gaussian Mechanism SG(q, c): the noise multiplier c
// is the noise standard deviation divided by the sensitivity. Everything
// here is in those units; only ClipL2 and NewLattice see S and σ.
//
// # Noise on a lattice
//
// A DP round is computed on the integer lattice γℤᵈ (NewLattice): γ is the
// power of two with c·S/γ ∈ [2¹⁴, 2¹⁵); each re-clipped update is rounded
// to an integer vector whose squared norm is checked exactly against
// ⌊(S/γ)²⌋ (Lattice.Round); the sum is exact in int64; and the noise is
// N_ℤ(0, σ_ℤ²) with σ_ℤ² = ⌈(c·S/γ)²⌉, drawn exactly by DiscreteGaussian
// (Canonne, Kamath, Steinke 2020) from uniform integers. The sensitivity
// on the lattice is √⌊(S/γ)²⌋ ≤ S/γ ≤ σ_ℤ/c. docs/privacy.md gives the
// argument that the accountant's continuous-Gaussian RDP covers this
// mechanism (proven for the unsampled case and one direction of the
// subsampled one at integer orders; a Poisson-summation bound with an
// explicit, negligible error term otherwise). AddGaussian, the float
// sampler, is no longer used for a study's noise: its outputs lie on a
// grid an adversary can test (shared/fl TestFloatNoiseAttack).
//
// # Rényi DP of the Sampled Gaussian Mechanism
//
// Mironov, Talwar and Zhang, "Rényi Differential Privacy of the Sampled
// Gaussian Mechanism" (2019), show that SG(q, c) is (α, ξ(α))-RDP with
//
//	ξ(α) = log(A_α)/(α−1),  A_α = E_{z∼μ₀}[(μ(z)/μ₀(z))^α],
//	μ₀ = N(0, c²), μ₁ = N(1, c²), μ = (1−q)μ₀ + qμ₁,
//
// the larger of the two directions. RDP computes A_α in log space. For
// integer α (their §3.3, case I)
//
//	A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k exp((k²−k)/(2c²)),
//
// with log-binomials from math.Lgamma, never forming exp((k²−k)/(2c²)).
// For fractional α (case II, the paper's eq. 7 as quoted in seed 002) the
// integral is split at z₀ = ½ + c²·log(1/q − 1), where qμ₁ = (1−q)μ₀, and
// each side is expanded binomially:
//
//	A_α = Σ_{k≥0} C(α,k) [ (1−q)^{α−k} q^k e^{(k²−k)/(2c²)} ½erfc((k−z₀)/(√2c))
//	                     + (1−q)^k q^{α−k} e^{((α−k)²−(α−k))/(2c²)} ½erfc((z₀−(α−k))/(√2c)) ].
//
// The second term's exponent and erfc argument use α−k, not k: the formula
// as printed in seed 002 writes e^{(k²−k)/(2σ²)} and erfc((z₁−k)/(√2σ)) for
// both terms, which does not match the integral (our derivation is checked
// against direct numerical integration in the tests).
//
// The coefficients C(α,k) are positive for k ≤ ⌊α⌋ and alternate in sign
// after. The signs are kept (summing absolute values, as one widely used
// library does, overstates the RDP of fractional orders). The alternating
// tail decays only polynomially in k, so it is summed with the
// Cohen–Rodriguez Villegas–Zagier acceleration (at most 24 terms): its
// terms form a Hausdorff moment sequence, which gives a proven error bound
// that is added to A_α, so rounding of the series errs on the safe side. An
// order whose bound exceeds 1e-12·A_α is reported as +Inf and skipped by
// the conversion (the minimum over the other orders is still a valid
// bound). log erfc uses an asymptotic series where math.Erfc underflows
// (x ≥ 25). Special cases: q = 0 gives 0, q = 1 the plain Gaussian
// α/(2c²), c = 0 gives +Inf.
//
// # Composition and conversion
//
// RDP composes additively at each order, also for different (q, c) per
// round (RDP.Compose). Balle, Barthe, Gaboardi, Hsu and Sato,
// "Hypothesis Testing Interpretations and Rényi Differential Privacy"
// (AISTATS 2020, Theorem 21; paper S2 Theorem 3) convert (α, ρ)-RDP to
//
//	ε = ρ + log((α−1)/α) − (log δ + log α)/(α−1),
//
// and RDP.Epsilon reports the minimum over its orders (clamped at 0)
// and the order that attains it. DefaultOrders are 1.1 … 10.9 (step 0.1),
// 11 … 63, 64, 128, 256, 512, 1024; the fractional ones count only while
// every composed round is unsampled (q = 1): for 0 < q < 1 only integer
// orders have a proof (see proven.go; ArguedEpsilon shows the fractional
// figure beside). NoiseMultiplier inverts Epsilon with a
// bracketing search on log c (secant steps, then Anderson–Björck regula
// falsi with bisection as a safeguard) and returns the upper end of the
// final bracket, so the guarantee of the returned c is always at most the
// target and the lower end, within 1e-7 of it, misses the target.
//
// A Schedule gives every round its own multiplier c_t (seed 004's per-round
// budgets, fixed and public before the study): ParseSchedule reads
// "constant", "linear:r", "step:j,r", "geometric:r" or a list "c1,…,cT";
// ScheduleEpsilon composes the rounds exactly (RDP summed per order, or
// PLD), never by splitting (ε, δ) per round; Schedule.Calibrate scales a
// rule to the smallest multipliers that meet a target ε.
//
// # Privacy loss distributions (PLD)
//
// PLDEpsilon computes ε of a list of Events (runs of rounds with their own
// q and c) under add/remove adjacency from the distribution of the privacy
// loss L = log(dP/dQ) (Koskela, Jälkö and Honkela 2020; Doroshenko,
// Ghazi, Kamath, Kumar and Manurangsi, "Connect the dots: tighter discrete
// approximations of privacy loss distributions", PETS 2022). Per round:
//
//	remove: P = (1−q)N(0, c²) + qN(1, c²), Q = N(0, c²),
//	add:    P = N(0, c²),                  Q = (1−q)N(0, c²) + qN(1, c²),
//
// which differ under Poisson sampling; both are composed and the worse ε
// is reported (PLDEstimate.Direction). The loss of one round is put on the
// grid k·h (DefaultPLDInterval = 1e-3) with the connect-the-dots masses
// (see grid.discretise): the resulting δ(ε) interpolates the exact one
// linearly in e^ε at the grid points and, the exact curve being convex in
// e^ε, lies above it; dominance survives composition, so ε is never under-
// reported. The rounds are composed by FFT (fft.go): two real sequences
// (remove and add) share one complex transform, each event's spectrum is
// raised to its number of rounds, and the composed grid is the window
// outside which a Chernoff bound on the discretised losses leaves < 1e-15 of
// mass at each end (aliased mass is charged to δ). δ also carries the FFT's
// rounding (a normwise bound times the number of rounds) and a relative
// 1e-7 per round for the masses' rounding. PLDEstimate.Lower is the same
// computation with every loss rounded down (a lower bound on the exact ε).
// ε is then the smallest ε ≥ 0 with δ(ε) ≤ δ: a scan down the composed grid
// keeps Σ m and Σ m·e^{−ℓ} above ε and solves the linear piece.
// PLDNoiseMultiplier calibrates c with the pessimistic ε, starting from the
// RDP answer.
//
// Accountant is the interface both implement (RDPAccountant,
// PLDAccountant): compose events into ε for δ, and calibrate c for a
// budget. AccountantKind ("rdp" | "pld") is an accountant's name in study
// files and flags; LookupAccountant finds it in the registry (kind.go),
// EpsilonFor and NoiseMultiplierFor go through it, Schedule.Calibrate
// calibrates a noise schedule with it, and Params.Accountant selects the
// one Validate checks with. EpsilonAfter is the one computation of a
// study's running ε (coordinator, LHA, helper); MultiplierAt and
// RoundEvents the one reading of its noise multipliers.
//
// # Speed
//
// Epsilon(q, c, T, δ) evaluates the RDP curve of (q, c) lazily and skips
// orders that provably cannot attain the minimum: log A_α is convex in α,
// so chords through the integer orders ≤ 63 (always evaluated, cheap
// binomial sums) bound every other order's RDP from below, and an order
// whose lower bound on ε, less a slack far above rounding, exceeds the
// best ε found is not evaluated. ε and the order reported are exactly those
// of the full curve (tests compare bit for bit). The curves of the last 8
// (q, c) pairs are cached (Epsilon, and Compose of accountants over
// DefaultOrders), with the per-(q, c) tables (e^{h(k)}, G1, the G2 tables of
// each fractional group) inside them: a coordinator asking for ε round after
// round pays the series once. The cache is safe for concurrent use.
//
// L2Norm sums squares directly (four accumulators, compensated across
// blocks of 32) and falls back to the dnrm2-style scaled loop only when the
// sum leaves [2⁻⁵⁰⁰, 2⁵⁰⁰] or is not finite.
//
// # Conventions
//
// Parameter checks live in checks.go (CheckEpsilon, CheckDelta, …,
// Params.Validate): NaN and ±Inf are rejected, errors name the parameter
// and its range and wrap ErrInvalidParameter. Functions that take
// already-validated parameters panic on programmer errors (Compose, ClipL2,
// AddGaussian, Lattice.Round); RDP and Epsilon return NaN for invalid inputs. Slices
// changed in place are named dst. Randomness is injected as a
// *rand.Rand (math/rand/v2); privacy noise should come from NewSecureRand.
//
// # Example
//
//	c, err := privacy.NoiseMultiplier(2, 1e-5, 0.25, 75) // ε = 2, δ = 1e-5, q = 0.25, T = 75
//	acc := privacy.NewRDP(nil)
//	for range 75 {
//		acc.Compose(0.25, c, 1) // one round
//	}
//	eps, order := acc.Epsilon(1e-5) // eps ≤ 2
package privacy
