package protocol

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
)

// Settings are the study parameters a coordinator sets, declared once:
// the study file (coordinator/study.File) and the study value sent to
// every LHA (Study) embed them, so each has one Go name, one JSON name
// (encoding/json flattens the embedded struct: the file and the welcome
// keep the names below) and one unit. Study adds what is derived from
// them (N, q, c, the layers, the slack-checked schedule, the hashes); the
// file adds what only the coordinator keeps (tokens, enrolment, helper
// address, state). Study.Validate owns every bound; the paper's defaults
// of the zero fields are filled by the study file (coordinator/study
// Defaults, from shared/model's presets). docs/study-file.md documents
// every field.
type Settings struct {
	// Name names the study for people. Defaults to "fedcast study".
	Name string `json:"name"`
	// Epsilon is the client-level privacy budget ε: finite, > 0, except
	// under privacy "example", which has none (must be 0). Delta is δ
	// (default 1e-5).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Accountant is the privacy accountant that calibrates the noise and
	// computes ε from the rounds: "rdp" (the default when empty) or "pld".
	Accountant privacy.AccountantKind `json:"accountant,omitempty"`
	// NoiseSchedule is the rule that gives each round its own noise
	// multiplier (privacy.Schedule; docs/strategies.md): "constant" (the
	// default when empty), "linear:r", "step:j,r", "geometric:r", whose
	// scale is calibrated to Epsilon, or an explicit list "c1,c2,…,cT"
	// that must fit the budget. Study.NoiseMultipliers are its calibrated
	// values.
	NoiseSchedule string `json:"noise_schedule,omitempty"`
	// Rounds is T, the planned number of rounds (of every campaign of a
	// continuing study together).
	Rounds int `json:"rounds"`
	// Campaigns makes a continuing study: Campaigns training campaigns of
	// Rounds/Campaigns rounds each (Rounds must be a multiple), campaign k
	// starting at t₀ + (k−1)·Every. 0 or 1: one campaign. Epsilon is then
	// the lifetime budget: the noise is calibrated so that all planned
	// rounds compose to it exactly (campaign.go).
	Campaigns int      `json:"campaigns,omitempty"`
	Every     Duration `json:"every,omitempty"`
	// ExpectedClients is m, the expected number of LHAs per round
	// (q = m/N).
	ExpectedClients int `json:"expected_clients"`
	// ClipNorm is S, the L2 bound of each update (default: the design's).
	ClipNorm float64 `json:"clip_norm"`
	// LocalEpochs is E, full-batch Adam steps per round.
	LocalEpochs int `json:"local_epochs"`
	// LearningRate is Adam's step size.
	LearningRate float64 `json:"learning_rate"`
	// History is H (input days), Horizon is P (days ahead).
	History int `json:"history"`
	Horizon int `json:"horizon"`
	// Smoothing is "centered" (default) or "trailing" (7-day moving
	// average).
	Smoothing string `json:"smoothing"`
	// TrainFraction is the share of each area's windows (earliest by
	// target date) used for training.
	TrainFraction float64 `json:"train_fraction"`
	// From and To restrict the windows to a date range (YYYY-MM-DD, both
	// inclusive); empty means each LHA's whole series.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Hidden are the MLP's hidden layer sizes (Study.Layers adds the
	// input and the output layer).
	Hidden []int `json:"hidden"`
	// Features names what the network reads and predicts (shared/model):
	// "log-change" (changes of ln(1+count) against the last input day; an
	// output of 0 is the no-change forecast; `study new` writes it),
	// "counts" (the paper's raw counts) or "weekly-total". Empty means
	// "counts" (files written before the field).
	Features string `json:"features,omitempty"`
	// Damping in (0, 1] multiplies a log-change model's output before it
	// becomes a forecast (post-processing of the final model). 0 (absent)
	// means 1: none.
	Damping float64 `json:"damping,omitempty"`
	// Weekly, with Features "weekly-total", are the weekly design's
	// windows (model.Weekly): each LHA trains on and forecasts the next
	// 7-day total from its own series and the public inputs. Absent
	// otherwise.
	Weekly *model.Weekly `json:"weekly,omitempty"`
	// Outputs is the network's number of outputs: 0 (absent) or 1, one
	// forecast; with a quantile head (model.Weekly.Quantiles) one per hub
	// level, and then it must be Weekly.Outputs().
	Outputs int `json:"outputs,omitempty"`
	// RoundLength is L, the length of one slot of the study's public round
	// schedule: round k opens at t₀ + (k−1)·L (t₀: the moment the start
	// quorum was reached), takes updates until L − RoundSlack after it
	// opened, and its model is released at the slot's end, when the next
	// round opens. Defaults to DefaultRoundLength.
	RoundLength Duration `json:"round_length"`
	// RoundSlack is the end of each slot kept for aggregating, noising and
	// committing the round. Defaults to DefaultRoundSlack(L); must be in
	// (0, L/2].
	RoundSlack Duration `json:"round_slack"`
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("90s", "168h0m0s"): the one unit of every duration of a study.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string like \"60s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// NetOutputs returns the network's number of outputs (Outputs, at least 1).
func (s Settings) NetOutputs() int { return max(1, s.Outputs) }
