package experiment

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/series"
)

// Config is one experiment. Zero fields take the paper's values (spec §4–§6)
// where the doc says "default".
type Config struct {
	// Data is the case data. Required.
	Data *series.Dataset `json:"-"`
	// Populations maps area name to population, for the strata; optional
	// (areas without a population are left out of the strata only).
	Populations map[string]float64 `json:"-"`
	// CasesFile and PopulationFile name the sources, for the record.
	CasesFile      string `json:"cases_file,omitempty"`
	PopulationFile string `json:"counties_file,omitempty"`
	// From and To bound the study window, both inclusive; zero means the
	// whole data.
	From time.Time `json:"-"`
	To   time.Time `json:"-"`
	// Epsilons is the privacy grid; +Inf means non-DP. Required.
	Epsilons []float64 `json:"-"`
	// Runs per ε. Default 1.
	Runs int `json:"runs"`
	// Rounds T. Default 75.
	Rounds int `json:"rounds"`
	// ClientsPerRound m. Default 100 (capped at the number of areas).
	ClientsPerRound int `json:"clients_per_round"`
	// LocalEpochs E. Default 30.
	LocalEpochs int `json:"local_epochs"`
	// Clip S. Default 0.5.
	Clip float64 `json:"clip"`
	// Delta δ. Default 1e-5.
	Delta float64 `json:"delta"`
	// Accountant calibrates the noise and accounts the rounds: rdp or pld.
	// Default rdp.
	Accountant privacy.AccountantKind `json:"accountant"`
	// NoiseSchedule is a privacy.Schedule spec (per-round noise
	// multipliers, scale calibrated to each ε). Default constant.
	NoiseSchedule string `json:"noise_schedule,omitempty"`
	// LearningRate of Adam. Default 0.001.
	LearningRate float64 `json:"learning_rate"`
	// History H and Horizon P. Defaults 10 and 7.
	History int `json:"history"`
	Horizon int `json:"horizon"`
	// Smoothing of the series. Default centered.
	Smoothing series.Smoothing `json:"-"`
	// Split per area. Default temporal.
	Split series.Split `json:"-"`
	// Hidden layer sizes. Default 128, 64, 32 (nil); an empty non-nil
	// slice is a linear model.
	Hidden []int `json:"hidden"`
	// Features is the per-window feature map (shared/model). Default
	// model.Counts, the paper's. An anchored map starts from the all-zero
	// model (the no-change forecast) instead of a random one.
	Features model.Features `json:"features,omitempty"`
	// Damping in (0, 1] shrinks an anchored model's forecast change (see
	// model.Features.PredictDamped). Default 1 (none).
	Damping float64 `json:"damping,omitempty"`
	// Preset names the design the settings came from ("default",
	// "paper"), for the record; "" when set by hand.
	Preset string `json:"preset,omitempty"`
	// AverageLast, if > 1, makes the released model the mean of the
	// global models after the last AverageLast rounds (iterate averaging:
	// post-processing of released models, so it costs no privacy).
	AverageLast int `json:"average_last,omitempty"`
	// RandomInit starts an anchored model from InitRandom (the no-change
	// forecast) instead of the pretrained public model (model.Features.Init);
	// for measuring what pretraining gives.
	RandomInit bool `json:"random_init,omitempty"`
	// Seed of the experiment.
	Seed uint64 `json:"seed"`
	// EvalEvery: test MAPE is recorded every EvalEvery rounds. Default 5.
	EvalEvery int `json:"eval_every"`
	// Workers is the number of goroutines training, over all runs and the
	// clients within them (one pool: a run alone trains its clients on all
	// of them, several runs share them). Default GOMAXPROCS.
	Workers int `json:"workers"`
	// Progress, if set, receives one line per finished run.
	Progress io.Writer `json:"-"`
	// PointForecast is the point forecaster the quantile forecasts wrap:
	// PointModel (default; the trained model) or PointPersistence (the
	// last smoothed input; no training, so runs are instant).
	PointForecast string `json:"point_forecast"`
	// Calibration sets the intervals (see package forecast). Zero value:
	// forecast.DefaultCalibrator() around the model, or
	// forecast.PersistenceCalibrator() with PointPersistence.
	Calibration forecast.Calibrator `json:"calibration"`
	// StrategyOptions: strategy (FedAvg, MR-MTL), λ and privacy level
	// (client, example, both) with local DP-SGD's settings (strategies.go).
	StrategyOptions
}

func (c *Config) defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	deff := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Runs, 1)
	paper := model.Paper // the paper's defaults are written in shared/model only
	def(&c.Rounds, paper.Rounds)
	def(&c.ClientsPerRound, paper.ClientsPerRound)
	def(&c.LocalEpochs, paper.LocalEpochs)
	def(&c.History, model.PaperHistory)
	def(&c.Horizon, model.PaperHorizon)
	def(&c.EvalEvery, 5)
	def(&c.Workers, runtime.GOMAXPROCS(0))
	deff(&c.Clip, paper.Clip)
	deff(&c.Delta, model.PaperDelta)
	if c.Accountant == "" {
		c.Accountant = privacy.DefaultAccountant
	}
	deff(&c.LearningRate, paper.LearningRate)
	if c.Hidden == nil {
		c.Hidden = append([]int{}, paper.Hidden...)
	}
	if c.PointForecast == "" {
		c.PointForecast = PointModel
	}
	if c.Calibration == (forecast.Calibrator{}) {
		c.Calibration = forecast.DefaultCalibrator()
		if c.PointForecast == PointPersistence {
			c.Calibration = forecast.PersistenceCalibrator()
		}
	}
	if c.Features == "" {
		c.Features = model.Counts
	}
	if c.Damping == 0 {
		c.Damping = 1
	}
}

// Summary is mean ± sd of each measure across runs.
type Summary struct {
	MSE   metrics.Summary `json:"mse"`
	MAE   metrics.Summary `json:"mae"`
	MAPE  metrics.Summary `json:"mape"`
	MdAPE metrics.Summary `json:"mdape"`
	R2    metrics.Summary `json:"r2"`
}

func summarize(rs []metrics.Result) Summary {
	pick := func(f func(metrics.Result) float64) metrics.Summary {
		x := make([]float64, len(rs))
		for i, r := range rs {
			x[i] = f(r)
		}
		return metrics.Summarize(x)
	}
	return Summary{
		MSE:   pick(func(r metrics.Result) float64 { return r.MSE }),
		MAE:   pick(func(r metrics.Result) float64 { return r.MAE }),
		MAPE:  pick(func(r metrics.Result) float64 { return r.MAPE }),
		MdAPE: pick(func(r metrics.Result) float64 { return r.MdAPE }),
		R2:    pick(func(r metrics.Result) float64 { return r.R2 }),
	}
}

// StratumResult is the accuracy on the areas of one population stratum.
type StratumResult struct {
	Stratum string  `json:"stratum"`
	Areas   int     `json:"areas"`
	Metrics Summary `json:"metrics"`
}

// ConvergencePoint is the test MAPE after a number of rounds, across runs.
type ConvergencePoint struct {
	Round int             `json:"round"`
	MAPE  metrics.Summary `json:"mape"`
}

// Ratio is mean ± sd across runs of a per-run ratio model/baseline.
type Ratio = metrics.Summary

// Baseline is the accuracy of a forecast that needs no training on the
// same test windows: mean ± sd across runs (the random split changes the
// test set per run).
type Baseline struct {
	Name    string          `json:"name"`
	Metrics BaselineMetrics `json:"metrics"`
	// PerRun is the baseline on each run's test windows, run 1 first.
	PerRun []metrics.Result `json:"per_run"`
}

// BaselineMetrics are the baseline's MAE, MAPE and R².
type BaselineMetrics struct {
	MAE  metrics.Summary `json:"mae"`
	MAPE metrics.Summary `json:"mape"`
	R2   metrics.Summary `json:"r2"`
}

// Result is the outcome for one ε.
type Result struct {
	Epsilon         fl.JSONFloat `json:"epsilon"` // a number, or "inf" for non-DP
	NoiseMultiplier float64      `json:"noise_multiplier"`
	EpsilonSpent    fl.JSONFloat `json:"epsilon_spent"` // ε actually spent after T rounds at δ
	Order           float64      `json:"rdp_order,omitempty"`
	Runs            int          `json:"runs"`
	Metrics         Summary      `json:"metrics"`
	// RelativeMAE and RelativeMAPE are mean ± sd across runs of the run's
	// MAE (MAPE) divided by the persistence forecast's on the same test
	// windows: below 1 the model beats "no change". Absent in reports
	// written before the baseline existed.
	RelativeMAE  *Ratio `json:"relative_mae,omitempty"`
	RelativeMAPE *Ratio `json:"relative_mape,omitempty"`
	// Quantile forecasts on the test windows (package forecast): mean ±
	// sd over runs of the mean WIS, of the mean WIS divided by the
	// hub-style baseline's on the same windows, and of the coverage of the
	// 50 % and 95 % intervals.
	WIS          metrics.Summary    `json:"wis"`
	RelativeWIS  metrics.Summary    `json:"relative_wis"`
	Coverage50   metrics.Summary    `json:"coverage_50"`
	Coverage95   metrics.Summary    `json:"coverage_95"`
	Intervals    *IntervalDetail    `json:"intervals,omitempty"`
	TestWindows  int                `json:"test_windows"`         // per run
	ZeroTargets  int                `json:"zero_targets_dropped"` // per run, mean over runs rounded
	ByPopulation []StratumResult    `json:"by_population"`
	Convergence  []ConvergencePoint `json:"convergence"`
	PerRun       []metrics.Result   `json:"per_run"`
	Seconds      float64            `json:"seconds"` // summed training time of its runs

	// NoiseSchedule is c_1 … c_T with a noise schedule (absent when
	// constant; NoiseMultiplier is then the smallest c_t).
	NoiseSchedule []float64 `json:"noise_schedule,omitempty"`

	// For figures (not in JSON): each area's MAPE in each run, and the
	// first run's (true, predicted) test pairs.
	AreaMAPE  []float64 `json:"-"`
	PairsTrue []float64 `json:"-"`
	PairsPred []float64 `json:"-"`
	// Hub holds the first run's test-period quantile forecasts.
	Hub []forecast.HubForecast `json:"-"`

	// StrategyResult: the guarantee, strategy, example-level ε per LHA and
	// personalised accuracy (strategies.go).
	StrategyResult
}

// Report is a whole experiment.
type Report struct {
	Setting Setting `json:"config"`
	// Baseline is persistence (ŷ = the last smoothed input) on the same
	// test windows; nil in reports written before it existed.
	Baseline *Baseline `json:"baseline,omitempty"`
	Results  []Result  `json:"results"`
}

// Setting records every setting used, for the JSON output.
type Setting struct {
	Config
	From           string         `json:"from"`
	To             string         `json:"to"`
	Epsilons       []fl.JSONFloat `json:"epsilons"`
	Smoothing      string         `json:"smoothing"`
	Split          string         `json:"split"`
	Areas          int            `json:"areas"`
	SampleRate     float64        `json:"sampling_rate"`
	WindowsPerArea [2]int         `json:"windows_per_area"` // min, max
	TrainFraction  float64        `json:"train_fraction"`
	Model          []int          `json:"model"`
	WallSeconds    float64        `json:"wall_seconds"`
	GOMAXPROCS     int            `json:"gomaxprocs"`
	GoVersion      string         `json:"go_version"`
	NoiseSource    string         `json:"noise_source"`
	// Accountant calibrates the noise and reports ε spent.
	Accountant string `json:"accountant"`
}

func slicesClone(x []float64) []float64 { return append([]float64(nil), x...) }

func dateString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

func smoothingName(s series.Smoothing) string {
	if s == series.Trailing {
		return "trailing"
	}
	return "centered"
}

func splitName(s series.Split) string {
	if s == series.Random {
		return "random"
	}
	return "temporal"
}

func epsString(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return fmt.Sprintf("%g", e)
}
