package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// StrategyOptions choose how the LHAs train together and what the
// differential privacy protects (docs/strategies.md). The zero value is
// DP-FedAvg with client-level DP, as before the options existed.
type StrategyOptions struct {
	// Strategy is fl.FedAvg (default) or fl.MRMTL.
	Strategy fl.StrategyName `json:"strategy,omitempty"`
	// Lambda is MR-MTL's penalty λ ≥ 0 (0 is local training; +Inf is
	// FedAvg). Ignored under FedAvg.
	Lambda fl.JSONFloat `json:"lambda,omitempty"`
	// Privacy is the guarantee: fl.ClientLevel (default; the grid's ε is
	// the coordinator's client-level ε), fl.ExampleLevel (the grid's ε is
	// each LHA's example-level ε for its local DP-SGD; the coordinator adds
	// no noise) or fl.BothLevels (the grid's ε is client-level and every
	// LHA also runs local DP-SGD at ExampleEpsilon).
	Privacy fl.Guarantee `json:"privacy,omitempty"`
	// ExampleEpsilon is each LHA's example-level ε under fl.BothLevels.
	ExampleEpsilon fl.JSONFloat `json:"example_epsilon,omitempty"`
	// ExampleDelta is δ of the example-level guarantee. Default: Delta.
	ExampleDelta float64 `json:"example_delta,omitempty"`
	// ExampleRate is q_local, the Poisson rate of local DP-SGD's batches.
	// Default fl.DefaultExampleSampleRate.
	ExampleRate float64 `json:"example_rate,omitempty"`
	// ExampleClip is C, the L2 bound on one window's gradient. Default
	// fl.DefaultExampleClip.
	ExampleClip float64 `json:"example_clip,omitempty"`
	// Embargo drops each area's training windows whose target day comes
	// after the forecast origin (last input day) of its first test
	// window: with overlapping windows, the temporal split otherwise
	// trains on case counts up to P−1 days past the test origins, which a
	// forecaster at those origins would not have had, and which a personal
	// model can fit closely.
	Embargo bool `json:"embargo,omitempty"`
}

// strategyDefaults fills the defaults and checks the options.
func (o *StrategyOptions) strategyDefaults(delta float64) error {
	var err error
	if o.Strategy, err = fl.ParseStrategy(string(o.Strategy)); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if o.Privacy, err = fl.ParseGuarantee(string(o.Privacy)); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := fl.CheckLambda(float64(o.Lambda)); err != nil {
		return err
	}
	if o.Strategy == fl.FedAvg {
		o.Lambda = 0
	}
	if o.Privacy == fl.ClientLevel {
		o.ExampleEpsilon, o.ExampleDelta, o.ExampleRate, o.ExampleClip = 0, 0, 0, 0
		return nil
	}
	o.ExampleDelta, o.ExampleRate, o.ExampleClip = fl.ExampleDefaults(o.ExampleDelta, o.ExampleRate, o.ExampleClip, delta)
	if o.Privacy == fl.BothLevels && !(o.ExampleEpsilon > 0) {
		return fmt.Errorf("experiment: privacy %q needs the example-level ε of each LHA (> 0)", o.Privacy)
	}
	return nil
}

// clientLevel reports whether the grid's ε is a client-level ε (noise at
// the coordinator).
func (o *StrategyOptions) clientLevel() bool { return o.Privacy != fl.ExampleLevel }

// example returns the local DP-SGD setting of the result with grid value
// eps (nil under client-level privacy), calibrated for rounds·epochs steps.
func (o *StrategyOptions) example(eps float64, rounds, epochs int, acct privacy.AccountantKind) (*fl.ExampleDP, error) {
	var exEps float64
	switch o.Privacy {
	case fl.ClientLevel:
		return nil, nil
	case fl.ExampleLevel:
		exEps = eps
	default:
		exEps = float64(o.ExampleEpsilon)
	}
	e, err := fl.NewExampleDP(exEps, o.ExampleDelta, o.ExampleRate, o.ExampleClip, rounds*epochs, acct)
	if err != nil {
		return nil, fmt.Errorf("experiment: example-level ε=%v: %w", exEps, err)
	}
	return &e, nil
}

// StrategyResult labels a result with its strategy and guarantee, and
// holds what only some strategies and guarantees have.
type StrategyResult struct {
	// Guarantee is what the result's DP protects: "client" (one LHA's
	// participation; Epsilon is the coordinator's client-level ε),
	// "example" (one window of one LHA; the coordinator adds no noise and
	// Epsilon is "inf"; Example holds each LHA's ε) or "both".
	Guarantee fl.Guarantee    `json:"guarantee"`
	Strategy  fl.StrategyName `json:"strategy"`
	Lambda    fl.JSONFloat    `json:"lambda,omitempty"`
	// Example is the local DP-SGD setting and what each LHA spent (nil
	// under client-level privacy).
	Example *ExampleResult `json:"example,omitempty"`
	// Personal is the accuracy of each LHA forecasting its own test
	// windows with its own model (MR-MTL: its personal model; FedAvg: the
	// global model, so equal to Metrics).
	Personal *PersonalResult `json:"personal,omitempty"`
}

// ExampleResult is the example-level guarantee of a result: every LHA's
// own budget and what it spent, by its own accountant.
type ExampleResult struct {
	fl.ExampleDP
	// SpentPerLHA is min, mean and max over LHAs and runs of the ε each
	// LHA's accountant reports at the end of the study ("inf" without
	// noise).
	SpentMin  fl.JSONFloat `json:"spent_per_lha_min"`
	SpentMean fl.JSONFloat `json:"spent_per_lha_mean"`
	SpentMax  fl.JSONFloat `json:"spent_per_lha_max"`
	LHAs      int          `json:"lhas"`
}

// MarshalJSON keeps the embedded setting's fields (its own MarshalJSON
// would otherwise replace the whole object).
func (e ExampleResult) MarshalJSON() ([]byte, error) {
	type setting struct {
		Epsilon         fl.JSONFloat `json:"epsilon"`
		Delta           float64      `json:"delta"`
		SampleRate      float64      `json:"sample_rate"`
		ClipNorm        float64      `json:"clip_norm"`
		NoiseMultiplier float64      `json:"noise_multiplier"`
		Steps           int          `json:"steps"`
		Accountant      string       `json:"accountant"`
		SpentMin        fl.JSONFloat `json:"spent_per_lha_min"`
		SpentMean       fl.JSONFloat `json:"spent_per_lha_mean"`
		SpentMax        fl.JSONFloat `json:"spent_per_lha_max"`
		LHAs            int          `json:"lhas"`
	}
	return json.Marshal(setting{fl.JSONFloat(e.Epsilon), e.Delta, e.SampleRate, e.ClipNorm, e.NoiseMultiplier, e.Steps,
		string(e.AccountantKind()), e.SpentMin, e.SpentMean, e.SpentMax, e.LHAs})
}

// PersonalResult is mean ± sd across runs of the personalised accuracy.
type PersonalResult struct {
	Metrics     Summary          `json:"metrics"`
	RelativeMAE *Ratio           `json:"relative_mae"`
	PerRun      []metrics.Result `json:"per_run"`
}

// personalOutcome is one run's personalised evaluation and the ε each LHA
// spent.
type personalOutcome struct {
	result metrics.Result
	spent  []float64
}

// evaluatePersonal predicts every test window with the model of its own
// LHA (lhas.personalModel) and returns the metrics, with the example-level
// ε each LHA spent.
func evaluatePersonal(l *lhas, global []float64, m *nn.MLP, f model.Features, damping float64, rd *runData) personalOutcome {
	var out personalOutcome
	byName := map[string]int{}
	for k, name := range rd.trainNames {
		byName[name] = k
	}
	h := m.In()
	pred := make([]float64, len(rd.testY))
	w := make([]float64, len(global))
	for a, idx := range rd.testIdx {
		k, ok := byName[rd.areaNames[a]]
		if ok {
			l.personalModel(k, global, w)
		} else {
			copy(w, global) // an area without training windows has no personal model
		}
		for _, i := range idx {
			f.PredictDamped(m, w, rd.testX[i*h:(i+1)*h], pred[i:i+1], damping)
		}
	}
	out.result = metrics.Compute(rd.testY, pred)
	for _, c := range l.states {
		if c.DPSGD != nil {
			out.spent = append(out.spent, c.DPSGD.Spent())
		}
	}
	return out
}

// summarizeStrategy fills r's personal and example summaries from its runs.
func summarizeStrategy(r *Result, outs []personalOutcome, base []metrics.Result, runs []int) {
	var pr PersonalResult
	var rel []float64
	var spent []float64
	for i, o := range outs {
		pr.PerRun = append(pr.PerRun, o.result)
		rel = append(rel, o.result.MAE/base[runs[i]].MAE)
		spent = append(spent, o.spent...)
	}
	pr.Metrics = summarize(pr.PerRun)
	rm := metrics.Summarize(rel)
	pr.RelativeMAE = &rm
	r.Personal = &pr
	if r.Example != nil && len(spent) > 0 {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, s := range spent {
			lo, hi, sum = math.Min(lo, s), math.Max(hi, s), sum+s
		}
		r.Example.SpentMin, r.Example.SpentMax = fl.JSONFloat(lo), fl.JSONFloat(hi)
		r.Example.SpentMean = fl.JSONFloat(sum / float64(len(spent)))
		r.Example.LHAs = len(spent) / len(outs)
	}
}

// writeStrategyTable prints each result's guarantee and its global and
// personalised accuracy.
func (r *Report) writeStrategyTable(w io.Writer) {
	if len(r.Results) == 0 || r.Results[0].Personal == nil {
		return
	}
	s := r.Setting
	fmt.Fprintf(w, "\nStrategy %s", s.Strategy)
	if s.Strategy == fl.MRMTL {
		fmt.Fprintf(w, " (λ = %s)", epsString(float64(s.Lambda)))
	}
	fmt.Fprintf(w, ", privacy %s", s.Privacy)
	if s.Privacy != fl.ClientLevel {
		fmt.Fprintf(w, " (local DP-SGD: q_local = %g, C = %g, δ = %g per LHA)", s.ExampleRate, s.ExampleClip, s.ExampleDelta)
	}
	fmt.Fprintf(w, "\n%-9s %-8s %-8s %-10s %-18s %-16s %-16s %-18s %-16s %-16s\n", "guarantee", "client ε", "LHA ε", "LHA ε spent",
		"global MAE", "global rel. MAE", "global R²", "personal MAE", "personal rel.", "personal R²")
	for _, res := range r.Results {
		exEps, exSpent := "–", "–"
		if e := res.Example; e != nil {
			exEps = epsString(e.Epsilon)
			exSpent = spentString(float64(e.SpentMax))
		}
		m, p := res.Metrics, res.Personal.Metrics
		fmt.Fprintf(w, "%-9s %-8s %-8s %-10s %-18s %-16s %-16s %-18s %-16s %-16s\n", res.Guarantee, epsString(float64(res.Epsilon)), exEps, exSpent,
			pm(m.MAE.Mean, m.MAE.SD, 2), ratio(res.RelativeMAE), pm(m.R2.Mean, m.R2.SD, 3),
			pm(p.MAE.Mean, p.MAE.SD, 2), ratio(res.Personal.RelativeMAE), pm(p.R2.Mean, p.R2.SD, 3))
	}
}

// exampleSetting returns the result's local DP-SGD setting (nil: none).
func (r *Result) exampleSetting() *fl.ExampleDP {
	if r.Example == nil {
		return nil
	}
	e := r.Example.ExampleDP
	return &e
}

// progressNote is the extra of a progress line: personalised MAE under
// MR-MTL, the largest ε an LHA spent under local DP-SGD.
func (r *Result) progressNote(p personalOutcome) string {
	s := ""
	if r.Strategy == fl.MRMTL {
		s += fmt.Sprintf("  personal MAE %.2f R² %.3f", p.result.MAE, p.result.R2)
	}
	if r.Example != nil && len(p.spent) > 0 {
		hi := 0.0
		for _, v := range p.spent {
			hi = math.Max(hi, v)
		}
		s += fmt.Sprintf("  LHA ε ≤ %s", epsString(hi))
	}
	return s
}

// UnmarshalJSON reads what MarshalJSON wrote (ReadReport).
func (e *ExampleResult) UnmarshalJSON(b []byte) error {
	var v struct{ fl.ExampleDP }
	if err := json.Unmarshal(b, &v.ExampleDP); err != nil {
		return err
	}
	type rest struct {
		SpentMin  fl.JSONFloat `json:"spent_per_lha_min"`
		SpentMean fl.JSONFloat `json:"spent_per_lha_mean"`
		SpentMax  fl.JSONFloat `json:"spent_per_lha_max"`
		LHAs      int          `json:"lhas"`
	}
	var r rest
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*e = ExampleResult{ExampleDP: v.ExampleDP, SpentMin: r.SpentMin, SpentMean: r.SpentMean, SpentMax: r.SpentMax, LHAs: r.LHAs}
	return nil
}

// spentString formats a spent ε to 4 significant digits ("inf" for +Inf).
func spentString(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.4g", e)
}

// embargo returns train without the windows whose target is after the
// first test window's last input day, area by area (train and test are
// SplitAreas' output: one entry per area, in the same order).
func embargo(train, test []series.Area) []series.Area {
	out := make([]series.Area, len(train))
	for i, a := range train {
		out[i] = series.Area{Region: a.Region}
		if i >= len(test) || len(test[i].Windows) == 0 {
			out[i].Windows = a.Windows
			continue
		}
		origin := test[i].Windows[0].InputEnd
		for _, w := range test[i].Windows {
			if w.InputEnd.Before(origin) {
				origin = w.InputEnd
			}
		}
		for _, w := range a.Windows {
			if !w.Target.After(origin) {
				out[i].Windows = append(out[i].Windows, w)
			}
		}
	}
	return out
}
