package study

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// FileVersion is the version of the study file format.
const FileVersion = 1

// ErrConfig is wrapped by every study-file validation error.
var ErrConfig = errors.New("study: invalid study file")

// Duration is a time.Duration written as a Go duration string ("90s").
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
	// Name names the study. Defaults to "fedcast study".
	Name string `json:"name"`
	// Epsilon is the client-level privacy budget ε. Required, finite,
	// > 0, except under privacy "example", which has none (must be absent).
	Epsilon float64 `json:"epsilon"`
	// Delta is δ. Defaults to 1e-5.
	Delta float64 `json:"delta"`
	// Accountant is the privacy accountant that calibrates the noise and
	// gates the budget: "rdp" (the default when empty) or "pld".
	Accountant privacy.AccountantKind `json:"accountant,omitempty"`
	// NoiseSchedule gives each round its own noise multiplier
	// (privacy.Schedule; docs/strategies.md): "constant" (the default when
	// empty), "linear:r", "step:j,r", "geometric:r", whose scale is
	// calibrated to Epsilon, or an explicit list "c1,c2,…,cT" that must
	// fit the budget. Fixed when the study starts and sent to every LHA.
	NoiseSchedule string `json:"noise_schedule,omitempty"`
	// Rounds is T, all rounds of the study (of every campaign). Required.
	Rounds int `json:"rounds"`
	// Campaigns makes a continuing study: Campaigns training campaigns of
	// Rounds/Campaigns rounds each (Rounds must be a multiple), campaign k
	// starting Every after campaign k−1 (the first at t₀). 0 or 1: one
	// campaign. Epsilon is then the lifetime budget: the noise is
	// calibrated so that all planned rounds compose to it exactly.
	Campaigns int      `json:"campaigns,omitempty"`
	Every     Duration `json:"every,omitempty"`
	// ExpectedClients is m, expected LHAs per round (q = m/N). Required.
	ExpectedClients int `json:"expected_clients"`
	// ClipNorm is S. Defaults to 0.5.
	ClipNorm float64 `json:"clip_norm"`
	// LocalEpochs is E. Defaults to 30.
	LocalEpochs int `json:"local_epochs"`
	// LearningRate defaults to 0.001.
	LearningRate float64 `json:"learning_rate"`
	// History is H (default 10), Horizon P (default 7).
	History int `json:"history"`
	Horizon int `json:"horizon"`
	// Smoothing is "centered" (default) or "trailing".
	Smoothing string `json:"smoothing"`
	// TrainFraction defaults to 0.9.
	TrainFraction float64 `json:"train_fraction"`
	// From and To (YYYY-MM-DD, inclusive) restrict the windows; empty
	// means each LHA's whole series.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Hidden are the hidden layer sizes. Defaults to [128, 64, 32].
	Hidden []int `json:"hidden"`
	// Features is what the network reads and predicts: "log-change"
	// (fedcast's design; `study new` writes it) or "counts" (the paper's).
	// Defaults to "counts", so files written before the field keep their
	// meaning.
	Features string `json:"features,omitempty"`
	// Damping in (0, 1] multiplies a log-change model's forecast change
	// (post-processing of the final model). 0 (absent) means 1: none.
	Damping float64 `json:"damping,omitempty"`
	// Weekly, with features "weekly-total", are the weekly design's
	// windows (model.Weekly; public.go). Absent otherwise.
	Weekly *model.Weekly `json:"weekly,omitempty"`
	// RoundLength is L, the length of one slot of the study's public round
	// schedule: round k opens at t₀ + (k−1)·L (t₀: the moment the start
	// quorum was reached), takes updates until L − RoundSlack after it
	// opened, and its model is released at the slot's end, when the next
	// round opens. Defaults to 60s. It replaced round_deadline and
	// round_interval (see Parse).
	RoundLength Duration `json:"round_length"`
	// RoundSlack is the end of each slot kept for aggregating, noising and
	// committing the round: updates are taken until L − RoundSlack.
	// Defaults to L/10; must be in (0, L/2].
	RoundSlack Duration `json:"round_slack"`
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

// Defaults fills zero-valued optional fields with the paper's settings
// (shared/model: Paper and the Paper* constants, the one place they are
// written).
func (f *File) Defaults() {
	paper := model.Paper
	if f.Name == "" {
		f.Name = "fedcast study"
	}
	if f.Delta == 0 {
		f.Delta = model.PaperDelta
	}
	if f.ClipNorm == 0 {
		f.ClipNorm = paper.Clip
	}
	if f.LocalEpochs == 0 {
		f.LocalEpochs = paper.LocalEpochs
	}
	if f.LearningRate == 0 {
		f.LearningRate = paper.LearningRate
	}
	if f.History == 0 {
		f.History = model.PaperHistory
	}
	if f.Horizon == 0 {
		f.Horizon = model.PaperHorizon
	}
	if f.Smoothing == "" {
		f.Smoothing = "centered"
	}
	if f.TrainFraction == 0 {
		f.TrainFraction = model.PaperTrainFraction
	}
	if len(f.Hidden) == 0 {
		f.Hidden = append([]int{}, paper.Hidden...)
	}
	if f.RoundLength == 0 {
		f.RoundLength = Duration(DefaultRoundLength)
	}
	if f.RoundSlack == 0 {
		f.RoundSlack = f.RoundLength / 10
	}
}

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
}

// Validate checks the file (after Defaults). It does not calibrate the
// noise: Calibrate does.
func (f *File) Validate() error {
	if f.Version != FileVersion {
		return configErr("version is %d, this fedcast reads version %d", f.Version, FileVersion)
	}
	if !f.ClientLevelDP() {
		// privacy "example": the coordinator adds no noise and keeps no
		// client-level budget; the LHAs' budget is example_epsilon.
		if f.Epsilon != 0 || f.NoiseSchedule != "" {
			return configErr("epsilon %v and noise_schedule %q are the coordinator's client-level budget and noise, which privacy \"example\" does not have: leave them out and give each LHA's budget as example_epsilon (or use privacy \"both\")", f.Epsilon, f.NoiseSchedule)
		}
	} else if math.IsInf(f.Epsilon, 0) || math.IsNaN(f.Epsilon) || f.Epsilon <= 0 {
		return configErr("epsilon is %v: a live study needs a finite budget > 0 (non-DP runs are for `simulate`)", f.Epsilon)
	} else if err := privacy.CheckEpsilon(f.Epsilon); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := privacy.CheckDelta(f.Delta); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := f.checkPublic(); err != nil {
		return err
	}
	if _, err := privacy.ParseAccountantKind(string(f.Accountant)); err != nil {
		return configErr("accountant is %q: use \"rdp\" or \"pld\"", f.Accountant)
	}
	if sch, err := privacy.ParseSchedule(f.NoiseSchedule); err != nil {
		return fmt.Errorf("%w: noise_schedule: %w", ErrConfig, err)
	} else if _, err := sch.Shape(max(f.Rounds, 1)); err != nil && f.Rounds >= 1 {
		return fmt.Errorf("%w: noise_schedule: %w", ErrConfig, err)
	}
	if err := privacy.CheckClipNorm(f.ClipNorm); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if len(f.LHAs) == 0 {
		return configErr("no LHAs enrolled")
	}
	if err := f.checkRounds(); err != nil {
		return err
	}
	if f.ExpectedClients < 1 || f.ExpectedClients > len(f.LHAs) {
		return configErr("expected_clients (m) is %d, must be in [1, N=%d]", f.ExpectedClients, len(f.LHAs))
	}
	if f.Strategy == string(fl.Cyclic) && f.ExpectedClients != len(f.LHAs) {
		return configErr("strategy \"cyclic\" gives every LHA a turn in every round: expected_clients (m) is %d, must be N=%d (q = 1)", f.ExpectedClients, len(f.LHAs))
	}
	if f.LocalEpochs < 1 {
		return configErr("local_epochs is %d, must be ≥ 1", f.LocalEpochs)
	}
	if !(f.LearningRate > 0) || math.IsInf(f.LearningRate, 0) {
		return configErr("learning_rate is %v, must be finite and > 0", f.LearningRate)
	}
	if f.History < 1 || f.Horizon < 1 {
		return configErr("history %d and horizon %d must be ≥ 1", f.History, f.Horizon)
	}
	if _, err := series.ParseSmoothing(f.Smoothing); err != nil {
		return fmt.Errorf("%w: smoothing: %w", ErrConfig, err)
	}
	if !(f.TrainFraction > 0 && f.TrainFraction <= 1) {
		return configErr("train_fraction is %v, must be in (0, 1]", f.TrainFraction)
	}
	for _, d := range []struct{ name, v string }{{"from", f.From}, {"to", f.To}} {
		if d.v != "" {
			if _, err := time.Parse(time.DateOnly, d.v); err != nil {
				return configErr("%s is %q, want YYYY-MM-DD", d.name, d.v)
			}
		}
	}
	if err := f.checkWeekly(); err != nil {
		return err
	}
	if f.Damping != 0 {
		if err := model.CheckDamping(f.Damping); err != nil {
			return configErr("damping: %v", err)
		}
	}
	for _, h := range f.Hidden {
		if h < 1 || h > 4096 {
			return configErr("hidden layer size %d, must be in [1, 4096]", h)
		}
	}
	if f.RoundLength < Duration(MinRoundLength) {
		return configErr("round_length is %v, must be ≥ %v", time.Duration(f.RoundLength), MinRoundLength)
	}
	if f.RoundSlack <= 0 || f.RoundSlack > f.RoundLength/2 {
		return configErr("round_slack is %v, must be in (0, round_length/2 = %v]", time.Duration(f.RoundSlack), time.Duration(f.RoundLength/2))
	}
	if f.RestartGrace < 0 {
		return configErr("restart_grace is %v, must be ≥ 0", time.Duration(f.RestartGrace))
	}
	if f.StartQuorum < 0 || f.StartQuorum > len(f.LHAs) {
		return configErr("start_quorum is %d, must be in [0, N=%d]", f.StartQuorum, len(f.LHAs))
	}
	// δ ≥ 1/N would allow a mechanism that publishes one LHA's data
	// outright with probability δ·N ≥ 1 and still meet (ε, δ).
	if n := len(f.LHAs); f.Delta*float64(n) >= 1 {
		return configErr("delta is %v, must be < 1/N = %v (N = %d LHAs): a larger δ admits releasing an LHA's data outright", f.Delta, 1/float64(n), n)
	}
	if p := numParams(f.Layers()); p > protocol.MaxWeights {
		return configErr("the model (history %d, hidden %v) has %d weights, more than a protocol frame carries (%d)", f.History, f.Hidden, p, protocol.MaxWeights)
	}
	if !validHash(f.AdminTokenSHA256) {
		return configErr("admin_token_sha256 is not a hex SHA-256")
	}
	names := map[string]bool{}
	hashes := map[string]bool{f.AdminTokenSHA256: true}
	for i, l := range f.LHAs {
		if strings.TrimSpace(l.Name) == "" {
			return configErr("lhas[%d] has no name", i)
		}
		if names[l.Name] {
			return configErr("lhas[%d]: name %q enrolled twice", i, l.Name)
		}
		names[l.Name] = true
		if !validHash(l.TokenSHA256) {
			return configErr("lhas[%d] (%s): token_sha256 is not a hex SHA-256", i, l.Name)
		}
		if hashes[l.TokenSHA256] {
			return configErr("lhas[%d] (%s): token hash used twice", i, l.Name)
		}
		hashes[l.TokenSHA256] = true
	}
	if _, err := f.StrategyParams.Calibrate(f.Rounds, f.LocalEpochs, f.Delta, f.AccountantKind()); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return f.validateHelper()
}

// numParams counts an MLP's weights and biases without allocating them,
// saturating at MaxWeights+1 (a file may name absurd sizes).
func numParams(layers []int) int {
	n := 0
	for i := 1; i < len(layers); i++ {
		in, out := layers[i-1], layers[i]
		if in < 0 || out < 0 || in > protocol.MaxWeights || out > protocol.MaxWeights {
			return protocol.MaxWeights + 1
		}
		n += (in + 1) * out
		if n > protocol.MaxWeights {
			return protocol.MaxWeights + 1
		}
	}
	return n
}

func validHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && s == strings.ToLower(s)
}

// Limits of the schedule and the model.
const (
	// DefaultRoundLength is round_length when the file gives none.
	DefaultRoundLength = 60 * time.Second
	// MinRoundLength is the shortest round_length accepted (tests use a
	// few hundred milliseconds; real studies minutes).
	MinRoundLength = 50 * time.Millisecond
)

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

// Layers returns the MLP's layer sizes: H, the hidden sizes, 1.
func (f *File) Layers() []int {
	in := f.History
	if f.Weekly != nil {
		in = f.Weekly.Inputs()
	}
	return append(append([]int{in}, f.Hidden...), 1)
}

// Calibrate returns the smallest noise multiplier c whose T rounds at
// q = m/N stay within (ε, δ) by the study's accountant
// (privacy.NoiseMultiplierFor); with a noise schedule, the smallest c_t of
// CalibrateSchedule. It fails for parameters the accountant cannot account
// for.
func (f *File) Calibrate() (float64, error) {
	if !f.ClientLevelDP() {
		return 0, nil // privacy "example": no client-level noise
	}
	sch, err := privacy.ParseSchedule(f.NoiseSchedule)
	if err != nil {
		return 0, fmt.Errorf("study: noise_schedule: %w", err)
	}
	if sch.IsConstant() {
		c, err := privacy.NoiseMultiplierFor(f.AccountantKind(), f.Epsilon, f.Delta, f.SampleRate(), f.Rounds)
		if err != nil {
			return 0, fmt.Errorf("study: cannot calibrate the noise: %w", err)
		}
		return c, nil
	}
	cs, err := f.CalibrateSchedule()
	if err != nil {
		return 0, err
	}
	return slices.Min(cs), nil
}

// CalibrateSchedule returns the noise multipliers c_1 … c_T of a study with
// a noise schedule: the rule's shape at the smallest scale whose exact
// composition meets (ε, δ) by the study's accountant, or the explicit list
// if it fits (privacy.Schedule.Calibrate). It returns nil for the constant
// schedule (every round has Calibrate's c). The calculation is
// deterministic: a restart recomputes the same multipliers, and the engine
// checks them against the ledger.
func (f *File) CalibrateSchedule() ([]float64, error) {
	sch, err := privacy.ParseSchedule(f.NoiseSchedule)
	if err != nil {
		return nil, fmt.Errorf("study: noise_schedule: %w", err)
	}
	if sch.IsConstant() {
		return nil, nil
	}
	cs, err := sch.Calibrate(f.AccountantKind(), f.Epsilon, f.Delta, f.SampleRate(), f.Rounds)
	if err != nil {
		return nil, fmt.Errorf("study: cannot calibrate the noise schedule %q: %w", f.NoiseSchedule, err)
	}
	return cs, nil
}

// Quorum returns how many LHAs must be online before round 1 and after a
// restart: StartQuorum, or N when it is 0.
func (f *File) Quorum() int {
	if f.StartQuorum == 0 {
		return len(f.LHAs)
	}
	return f.StartQuorum
}

// ResumeWait returns the longest wait for the quorum after a restart:
// RestartGrace, or one RoundLength when it is 0 (ample for clients that
// reconnect with a backoff of seconds).
func (f *File) ResumeWait() time.Duration {
	if f.RestartGrace > 0 {
		return time.Duration(f.RestartGrace)
	}
	return time.Duration(f.RoundLength)
}

// AccountantKind returns the study's accountant (RDP when none is named).
func (f *File) AccountantKind() privacy.AccountantKind {
	if f.Accountant == "" {
		return privacy.DefaultAccountant
	}
	return f.Accountant
}

// Window returns how long a round takes updates: RoundLength − RoundSlack.
func (f *File) Window() time.Duration { return time.Duration(f.RoundLength - f.RoundSlack) }

// SampleRate returns q = m/N.
func (f *File) SampleRate() float64 { return float64(f.ExpectedClients) / float64(len(f.LHAs)) }

// Config returns the fl configuration for noise multiplier c: that of the
// public view (protocol.Study.FLConfig), so that the coordinator and the
// LHAs map the parameters the same way.
func (f *File) Config(c float64) fl.Config {
	st := f.Public(c, false)
	cfg, err := st.FLConfig()
	if err != nil { // an accountant Validate would refuse
		cfg.Accountant = f.AccountantKind()
	}
	return cfg
}

// WindowOptions returns the series window options of the study (those of
// its public view: protocol.Study.WindowOptions).
func (f *File) WindowOptions() (series.WindowOptions, error) {
	st := f.Public(0, false)
	return st.WindowOptions()
}

// Public returns the public study parameters sent to every client.
func (f *File) Public(c float64, insecure bool) protocol.Study {
	layers := f.Layers()
	return protocol.Study{
		Protocol: protocol.Version, Name: f.Name, Epsilon: f.Epsilon, Delta: f.Delta,
		Rounds: f.Rounds, Clients: len(f.LHAs), ExpectedClients: f.ExpectedClients,
		SampleRate: f.SampleRate(), ClipNorm: f.ClipNorm, NoiseMultiplier: c,
		LocalEpochs: f.LocalEpochs, LearningRate: f.LearningRate,
		History: f.History, Horizon: f.Horizon, Smoothing: f.Smoothing,
		TrainFraction: f.TrainFraction, From: f.From, To: f.To,
		Layers: layers, Params: nn.NewMLP(layers...).NumParams(), Features: f.Features, Damping: f.Damping,
		RoundLengthMillis: time.Duration(f.RoundLength).Milliseconds(),
		RoundSlackMillis:  time.Duration(f.RoundSlack).Milliseconds(),
		Campaigns:         f.Campaigns,
		EveryMillis:       time.Duration(f.Every).Milliseconds(),
		InsecureSeed:      insecure,
		Accountant:        string(f.AccountantKind()),
		StudyStrategy:     f.strategy(),
		Helper:            f.Helper.public(),
		PublicInputs:      f.publicInputs(),
		Weekly:            f.Weekly,
	}
}

// strategy is the study's strategy and privacy level with local DP-SGD
// calibrated for E steps in each of the T rounds (Validate has checked
// that it calibrates).
func (f *File) strategy() protocol.StudyStrategy {
	s, err := f.StrategyParams.Calibrate(f.Rounds, f.LocalEpochs, f.Delta, f.AccountantKind())
	if err != nil {
		panic(fmt.Sprintf("study: Public on an unvalidated file: %v", err))
	}
	return s
}

// NewToken returns a fresh secret token: 32 bytes from crypto/rand in
// unpadded base64url (43 characters, safe in a URL fragment).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken returns the hex SHA-256 of a token, as stored in study files.
func HashToken(token string) string {
	s := sha256.Sum256([]byte(token))
	return hex.EncodeToString(s[:])
}

// TokenMatches reports in constant time whether token hashes to hash.
func TokenMatches(token, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(hash)) == 1
}

// Tokens maps join tokens to LHA indices. Lookups hash the presented token
// first, so the map is keyed by hashes and its timing reveals nothing about
// the stored tokens; the match is confirmed with a constant-time compare.
type Tokens struct {
	byHash map[string]int
	hashes []string
	admin  string
}

// NewTokens indexes f's token hashes.
func NewTokens(f *File) *Tokens {
	t := &Tokens{byHash: make(map[string]int, len(f.LHAs)), admin: f.AdminTokenSHA256}
	for i, l := range f.LHAs {
		t.byHash[l.TokenSHA256] = i
		t.hashes = append(t.hashes, l.TokenSHA256)
	}
	return t
}

// LHA returns the index of the LHA holding token, or -1.
func (t *Tokens) LHA(token string) int {
	h := HashToken(token)
	i, ok := t.byHash[h]
	if !ok || subtle.ConstantTimeCompare([]byte(h), []byte(t.hashes[i])) != 1 {
		return -1
	}
	return i
}

// Admin reports whether token is the admin token.
func (t *Tokens) Admin(token string) bool { return TokenMatches(token, t.admin) }

// CreateOptions configure Create.
type CreateOptions struct {
	// Template holds the study parameters; its LHAs and admin hash are
	// replaced. Defaults are applied.
	Template File
	// Names of the LHAs to enrol. Required (at least one).
	Names []string
	// Design, if set, fills the template's zero training fields (see
	// FillDesign) before the defaults are applied.
	Design *model.Design
}

// Secrets are the tokens Create made: print them once, store them nowhere
// the coordinator can be made to read them.
type Secrets struct {
	Admin string   `json:"admin"`
	LHAs  []string `json:"lhas"` // LHAs[i] is the token of File.LHAs[i]
}

// Create makes a new study file with fresh tokens for names and an admin
// token, and validates it.
func Create(opt CreateOptions) (*File, *Secrets, error) {
	f := opt.Template
	f.Version = FileVersion
	s := &Secrets{Admin: NewToken()}
	f.AdminTokenSHA256 = HashToken(s.Admin)
	f.LHAs = nil
	for _, n := range opt.Names {
		tok := NewToken()
		s.LHAs = append(s.LHAs, tok)
		f.LHAs = append(f.LHAs, LHA{Name: n, TokenSHA256: HashToken(tok)})
	}
	if opt.Design != nil {
		f.FillDesign(*opt.Design)
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	c, err := f.Calibrate()
	if err != nil {
		return nil, nil, err
	}
	if err := f.CheckHelper(c); err != nil {
		return nil, nil, err
	}
	return &f, s, nil
}

// FillDesign fills the training recipe's zero-valued fields from d
// (shared/model): rounds T, m for the file's N LHAs (so call it after the
// LHAs are enrolled, and before Defaults), S, E, the learning rate, the
// hidden layers, the features and the input days H. Fields already set
// are kept.
func (f *File) FillDesign(d model.Design) {
	if f.History == 0 {
		f.History = d.History
	}
	if f.Rounds == 0 {
		f.Rounds = d.Rounds
	}
	if f.ExpectedClients == 0 {
		f.ExpectedClients = d.ExpectedClients(len(f.LHAs))
		if f.Strategy == string(fl.Cyclic) {
			f.ExpectedClients = len(f.LHAs) // every LHA takes a turn in every round
		}
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
	if f.Features == "" {
		f.Features = string(d.Features)
		if d.Weekly != nil && f.Weekly == nil {
			f.fillWeekly(*d.Weekly)
		}
	}
	if f.Damping == 0 && d.Damping != 1 {
		f.Damping = d.Damping
	}
}
