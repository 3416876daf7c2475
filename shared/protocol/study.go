package protocol

import (
	"github.com/fedcast/fedcast/shared/model"
)

// Study holds the public parameters of a study, everything a client needs
// to train and to recompute the privacy budget itself. Nothing in it is
// secret or depends on any LHA's data.
type Study struct {
	// Protocol is the protocol version of the coordinator.
	Protocol int `json:"protocol"`
	// Name names the study for people.
	Name string `json:"name"`
	// Epsilon is the privacy budget ε, Delta its δ.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Rounds is T, the planned number of rounds (of all campaigns
	// together in a continuing study).
	Rounds int `json:"rounds"`
	// Campaigns is the number of training campaigns of a continuing
	// study, each of Rounds/Campaigns rounds, campaign k starting at
	// t₀ + (k−1)·Every (0 or 1: one campaign, as before the field);
	// EveryMillis is Every in milliseconds. Public and fixed at creation
	// (campaign.go).
	Campaigns   int   `json:"campaigns,omitempty"`
	EveryMillis int64 `json:"every_ms,omitempty"`
	// Clients is N, the number of enrolled LHAs (fixed at the start).
	Clients int `json:"clients"`
	// ExpectedClients is m, the expected number of LHAs per round.
	ExpectedClients int `json:"expected_clients"`
	// SampleRate is q = m/N.
	SampleRate float64 `json:"sample_rate"`
	// ClipNorm is S, the L2 bound of each update.
	ClipNorm float64 `json:"clip_norm"`
	// NoiseMultiplier is c; the noise on the mean has σ = c·S/m.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// LocalEpochs is E, full-batch Adam steps per round.
	LocalEpochs int `json:"local_epochs"`
	// LearningRate is Adam's step size.
	LearningRate float64 `json:"learning_rate"`
	// History is H (input days), Horizon is P (days ahead).
	History int `json:"history"`
	Horizon int `json:"horizon"`
	// Smoothing is "centered" or "trailing" (7-day moving average).
	Smoothing string `json:"smoothing"`
	// TrainFraction is the share of each area's windows (earliest by
	// target date) used for training.
	TrainFraction float64 `json:"train_fraction"`
	// From and To restrict the windows to a date range (YYYY-MM-DD, both
	// inclusive); empty means the whole series.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Layers are the MLP's layer sizes, input H first, output 1 last.
	Layers []int `json:"layers"`
	// Features names what the network reads and predicts (shared/model):
	// "log-change" (changes of ln(1+count) against the last input day; an
	// output of 0 is the no-change forecast) or "counts" (the paper's raw
	// counts). Empty means "counts" (coordinators before the field).
	Features string `json:"features,omitempty"`
	// Damping in (0, 1] multiplies a log-change model's output before it
	// becomes a forecast (the forecast change is shrunk toward "no
	// change"). 0 (absent) means 1.
	Damping float64 `json:"damping,omitempty"`
	// Params is the length of the flat parameter vector.
	Params int `json:"params"`
	// RoundLengthMillis is L, the length of one slot of the public round
	// schedule in milliseconds: rounds open every L (see Schedule).
	RoundLengthMillis int64 `json:"round_length_ms"`
	// RoundSlackMillis is the end of each slot kept for aggregating and
	// committing: updates are taken until L − slack after a round opens,
	// and the model is released at the slot's end.
	RoundSlackMillis int64 `json:"round_slack_ms"`
	// InsecureSeed is true when the coordinator runs in research mode with
	// reproducible (not secret) sampling and noise.
	InsecureSeed bool `json:"insecure_seed,omitempty"`
	// Accountant names the privacy accountant that computes ε from the
	// rounds: "rdp" or "pld" (empty from coordinators that predate the
	// field: "rdp").
	Accountant string `json:"accountant,omitempty"`
	// StudyStrategy: strategy, λ, privacy level and local DP-SGD
	// (strategy.go; all empty: DP-FedAvg with client-level DP).
	StudyStrategy
	// NoiseSchedule, when present, is c_1 … c_T: the noise multiplier of
	// every round, fixed before the study (privacy.Schedule). Each LHA
	// checks every round's c against it. NoiseMultiplier is then the
	// smallest of them. Absent: every round has NoiseMultiplier.
	NoiseSchedule []float64 `json:"noise_schedule,omitempty"`
	// CyclicSeed, in a study with strategy "cyclic", is the seed of the
	// public turn timetable: the hex SHA-256 of the study file. Round r's
	// order is fl.CyclicOrder(CyclicSeed, r, Clients), and a round of the
	// protocol (round_start, update, event) is then one turn k = 1 … T·N
	// (fl.CyclicTurn). Empty in other studies.
	CyclicSeed string `json:"cyclic_seed,omitempty"`
	// Helper, when present, names the second server of two-server secure
	// aggregation (shared/secagg, studyhash.go): no single server sees an
	// LHA's update. Absent: the coordinator sees each clipped update.
	Helper *Helper `json:"helper,omitempty"`
	// TopUps are the raises of the lifetime budget made since the study
	// was created, in order (topup.go); the fields above already include
	// them. Absent: the budget is the one written at creation.
	TopUps []TopUp `json:"top_ups,omitempty"`
	// PublicInputs are the public data the study's design reads beside
	// each LHA's file, with source and hash (public.go).
	PublicInputs []PublicInput `json:"public_inputs,omitempty"`
	// Weekly, with Features "weekly-total", are the weekly design's
	// windows (model.Weekly): each LHA trains on and forecasts the next
	// 7-day total from its own series and the public inputs. Absent in
	// every other study.
	Weekly *model.Weekly `json:"weekly,omitempty"`
}
