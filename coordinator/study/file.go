package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
)

// FileVersion is the version of the study file format.
const FileVersion = 1

// ErrConfig is wrapped by every study-file validation error.
var ErrConfig = errors.New("study: invalid study file")

// Duration is protocol.Duration (a time.Duration written as a Go
// duration string, "90s"), the one unit of a study's durations; the alias
// keeps the name for the file's callers.
type Duration = protocol.Duration

// LHA is one enrolled local health authority.
type LHA struct {
	// Name identifies the LHA to the coordinator's admin. Required, unique.
	Name string `json:"name"`
	// TokenSHA256 is the hex SHA-256 of its join token. Required.
	TokenSHA256 string `json:"token_sha256"`
}

// File is a study file. Zero-valued optional fields take the paper's
// defaults (see Defaults); docs/study-file.md documents every field.
type File struct {
	// Version is FileVersion. Required.
	Version int `json:"version"`
	// Settings are the study's parameters (protocol.Settings, declared
	// once for the file and the study value sent to every LHA; their JSON
	// names are the file's fields). Zero optional ones take the paper's
	// defaults (Defaults).
	protocol.Settings
	// LinksFile is where `study new --links` wrote the join and admin
	// links (a secret CSV kept by the coordinator; this file holds only
	// its path, so that serve can say where the links are).
	LinksFile string `json:"links_file,omitempty"`
	// StartQuorum is how many LHAs must be online and ready (file checked,
	// Join pressed; see protocol.Ready) before round 1 starts,
	// and again after a coordinator restart before the next round opens
	// (there for at most RestartGrace). Rounds in between never wait. 0
	// means all N. Rounds sample from all N enrolled LHAs either way: the
	// quorum decides when a round opens, never who is sampled.
	StartQuorum int `json:"start_quorum,omitempty"`
	// RestartGrace bounds the wait for StartQuorum after a restart of a
	// study with committed rounds, so that the LHAs can reconnect before
	// the next round spends budget; the round opens at the first slot of
	// the schedule after the quorum is back or the grace has passed,
	// whichever comes first. 0 means one RoundLength (see ResumeWait);
	// `fedcast serve --restart-grace` overrides it.
	RestartGrace Duration `json:"restart_grace,omitempty"`
	// Origins are extra browser origins (host patterns as in
	// websocket.AcceptOptions.OriginPatterns, e.g. "lha.example.org") allowed
	// to open the websocket; same-origin pages are always allowed.
	Origins []string `json:"origins,omitempty"`
	// PublicInputs are the public data the design reads, with source and
	// hash (public.go, docs/deployment.md); sent to every LHA.
	PublicInputs []PublicFile `json:"public_inputs,omitempty"`
	// AdminTokenSHA256 is the hex SHA-256 of the admin token. Required.
	AdminTokenSHA256 string `json:"admin_token_sha256"`
	// LHAs are the enrolled LHAs; N = len(LHAs). Required.
	LHAs []LHA `json:"lhas"`
	// Helper, when present, names the helper server of two-server secure
	// aggregation (helper.go; docs/study-file.md): no single server sees
	// an LHA's update. Absent: the coordinator sees each clipped update.
	Helper *HelperRef `json:"helper,omitempty"`
	// StrategyParams: "strategy" (fedavg | mrmtl | cyclic), "lambda", "privacy"
	// (client | example | both) and, with example or both, "example_epsilon", "example_delta",
	// "example_rate", "example_clip" (docs/strategies.md, docs/study-file.md).
	protocol.StrategyParams
}

// study is the study value the file describes, before calibration: the
// one mapping from the file's fields to protocol.Study (noise multiplier
// 0, no noise schedule, local DP-SGD not yet calibrated). Validate checks
// it; Public completes it.
func (f *File) study() protocol.Study {
	layers := f.Layers()
	n := len(f.LHAs)
	st := protocol.Study{
		Protocol:      protocol.Version,
		Settings:      f.Settings,
		Clients:       n,
		SampleRate:    float64(f.ExpectedClients) / float64(max(n, 1)),
		Layers:        layers,
		Params:        protocol.ParamCount(layers),
		StudyStrategy: protocol.StudyStrategy{StrategyParams: f.StrategyParams},
		Helper:        f.Helper.public(),
		PublicInputs:  f.publicInputs(),
	}
	st.Accountant = f.AccountantKind()
	st.Hidden = slices.Clone(f.Hidden)
	return st
}

// Public returns the study value sent to every client: the file's study
// with noise multiplier c and local DP-SGD calibrated (the noise schedule,
// the cyclic seed and the top-ups are the engine's to add).
func (f *File) Public(c float64, insecure bool) protocol.Study {
	st := f.study()
	st.NoiseMultiplier, st.InsecureSeed, st.StudyStrategy = c, insecure, f.strategy()
	return st
}

// Defaults fills zero-valued optional fields with the paper's settings
// (shared/model: Paper and the Paper* constants, the one place they are
// written).
func (f *File) Defaults() {
	if f.Name == "" {
		f.Name = "fedcast study"
	}
	if f.Delta == 0 {
		f.Delta = model.PaperDelta
	}
	f.fillTraining(model.Paper)
	if f.Horizon == 0 {
		f.Horizon = model.PaperHorizon
	}
	if f.Smoothing == "" {
		f.Smoothing = "centered"
	}
	if f.TrainFraction == 0 {
		f.TrainFraction = model.PaperTrainFraction
	}
	if f.RoundLength == 0 {
		f.RoundLength = Duration(DefaultRoundLength)
	}
	if f.RoundSlack == 0 {
		f.RoundSlack = Duration(protocol.DefaultRoundSlack(time.Duration(f.RoundLength)))
	}
}

// fillTraining fills the zero training fields from a design: H, S, E,
// the learning rate and the hidden layers (Defaults from the paper's,
// FillDesign from the chosen preset's).
func (f *File) fillTraining(d model.Design) {
	if f.History == 0 {
		f.History = d.History
	}
	if f.ClipNorm == 0 {
		f.ClipNorm = d.Clip
	}
	if f.LocalEpochs == 0 {
		f.LocalEpochs = d.LocalEpochs
	}
	if f.LearningRate == 0 {
		f.LearningRate = d.LearningRate
	}
	if len(f.Hidden) == 0 {
		f.Hidden = append([]int(nil), d.Hidden...)
	}
}

// removedFields are study-file fields of earlier fedcast versions that are
// refused with what to write instead.
var removedFields = map[string]string{
	"round_deadline": `rounds now follow a fixed public schedule: replace "round_deadline" (and "round_interval") by "round_length", the time from one round's start to the next (e.g. "round_length": "90s" for the former "round_deadline": "60s" plus "round_interval": "30s"); updates are taken until round_length − round_slack (default round_length/10)`,
	"round_interval": `rounds now follow a fixed public schedule: replace "round_interval" (and "round_deadline") by "round_length", the time from one round's start to the next; updates are taken until round_length − round_slack (default round_length/10)`,
}

// Parse reads a study file, applies the defaults and validates it.
// Unknown fields are refused (a typo must not silently change a study);
// the removed round_deadline and round_interval are refused with a
// message saying what to write instead.
func Parse(b []byte) (*File, error) {
	var f File
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) == nil {
		for _, k := range []string{"round_deadline", "round_interval"} {
			if _, ok := top[k]; ok {
				return nil, configErr("field %q is no longer supported: %s", k, removedFields[k])
			}
		}
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Load reads the study file at path; it returns the file and its raw bytes
// (whose hash the ledger records).
func Load(path string) (*File, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("study: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, b, nil
}

// Marshal writes f as indented JSON.
func (f *File) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
