// Package synth generates synthetic outbreak data in the shape of the
// real county file, so that fedcast's commands, demos and tests run
// without the real data (which must not be committed).
//
// # Model
//
// Generate simulates a stochastic metapopulation SEIR model in daily
// steps. Each area i has S, E, I and R compartments (whole people) and a
// population N_i drawn from a log-normal distribution (median 150,000,
// log-sd 1.0, clipped to 20,000 … 3,000,000: a heavy right tail like real
// counties). Areas sit at random points of a 600 km × 600 km map. Per day:
//
//	prevalence  p_i = I_i / N_i
//	mixing      m_i = (1−c)·p_i + c·Σ_j w_ij p_j,   w_ij ∝ N_j / (d_ij² + (10 km)²), Σ_j w_ij = 1
//	force       λ_i = R(t)·a_i / D_I · m_i
//	S → E       Binomial(S_i, 1 − e^{−λ_i})
//	E → I       Binomial(E_i, 1 − e^{−1/D_E})
//	I → R       Binomial(I_i, 1 − e^{−1/D_I})
//
// with c the mobility coupling (default 0.1), D_E = 4 and D_I = 5 days,
// a_i a per-area transmission factor (log-normal, log-sd 0.1), and R(t)
// the time-varying reproduction number: R0 = 1.4 until the intervention
// day (default day 45, 2020-11-15), then falling linearly over 10 days
// by 40 % to 0.84, so the series rise, peak and fall: a wave to forecast.
// The simulation starts 21 days before the first reported day (burn-in)
// from 60 infectious per 100,000 (varied per area by a log-normal factor,
// log-sd 0.5) and the matching number exposed.
//
// # Reporting
//
// Each newly infectious person is detected with probability 0.35
// (binomial thinning). Detected cases join the health office's backlog;
// each day the office reports a weekday-dependent share of it
// (binomially): Sunday 0.45, Monday 1, Tuesday–Thursday 0.9, Friday 0.85,
// Saturday 0.65. That gives the Sunday dip and Monday catch-up of real
// reporting-date data. Small offices occasionally report nothing on a day
// (probability 0.03 · min(1, 100,000/N_i)); the backlog follows later.
// Small areas also have genuine zero days when few people are infected.
//
// # Realism switches
//
// Real counties are less regular than this model. Four options, all off
// by default (and then drawing nothing, so the output is unchanged), make
// the data harder to forecast: TimingSpread shifts each area's
// intervention day (normal, sd in days: waves turn at different times),
// DetectionDrift lets each area's log reporting rate walk randomly
// (daily sd), DetectionTrend moves every area's log reporting rate by a
// fixed amount per day (testing that winds down or expands), and
// ReportingNoise multiplies the share of the backlog reported each day by
// a log-normal factor per area and day (bursty reporting). fedcast's
// design tuning (coordinator/experiment, TestTuneDesign) uses them.
//
// # Output
//
// Generate returns a series.Dataset (one region per area, named "S001",
// "S002", …, sorted) with Days whole, non-negative daily counts from
// Start, and the areas' metadata, which WritePopulations writes in the
// layout of counties.csv. All randomness comes from one PCG generator
// seeded with Options.Seed: the same Options give identical output on
// every platform. Options documents each parameter and its default; the
// zero value of a field means its default, and NoIntervention,
// NoMobility and NoMissedDays switch those mechanisms off.
package synth
