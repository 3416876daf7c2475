package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
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

const trainFraction = 0.9

// Run executes the experiment.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Data == nil || len(cfg.Data.Regions) == 0 {
		return nil, errors.New("experiment: no case data")
	}
	if len(cfg.Epsilons) == 0 {
		return nil, errors.New("experiment: no ε given")
	}
	if err := checkPointForecast(cfg.PointForecast); err != nil {
		return nil, err
	}
	if err := cfg.Calibration.Validate(); err != nil {
		return nil, err
	}
	if err := model.CheckDamping(cfg.Damping); err != nil {
		return nil, err
	}
	if err := cfg.strategyDefaults(cfg.Delta); err != nil {
		return nil, err
	}
	sched, err := cfg.checkStrategy()
	if err != nil {
		return nil, err
	}
	areas, err := series.MakeWindows(cfg.Data, series.WindowOptions{
		History: cfg.History, Horizon: cfg.Horizon, Smoothing: cfg.Smoothing, From: cfg.From, To: cfg.To,
	})
	if err != nil {
		return nil, err
	}
	if len(areas) == 0 {
		return nil, errors.New("experiment: the study window yields no windows")
	}
	n := len(areas)
	if cfg.ClientsPerRound > n || cfg.Strategy == fl.Cyclic {
		cfg.ClientsPerRound = n // cyclic: every area takes a turn in every round
	}
	q := float64(cfg.ClientsPerRound) / float64(n)
	sizes := append(append([]int{cfg.History}, cfg.Hidden...), 1)
	net := nn.NewMLP(sizes...)

	rep := &Report{}
	st := &rep.Setting
	st.Config = cfg
	st.From, st.To = dateString(cfg.From), dateString(cfg.To)
	st.Smoothing = smoothingName(cfg.Smoothing)
	st.Split = splitName(cfg.Split)
	st.Areas = n
	st.SampleRate = q
	st.TrainFraction = trainFraction
	st.Model = sizes
	st.GOMAXPROCS = runtime.GOMAXPROCS(0)
	st.GoVersion = runtime.Version()
	st.Accountant = string(cfg.Accountant)
	st.NoiseSource = "seeded PCG streams (research run: reproducible noise, never for release)"
	st.WindowsPerArea = [2]int{math.MaxInt, 0}
	for _, a := range areas {
		st.WindowsPerArea[0] = min(st.WindowsPerArea[0], len(a.Windows))
		st.WindowsPerArea[1] = max(st.WindowsPerArea[1], len(a.Windows))
	}

	iv := &intervalInputs{cal: cfg.Calibration, h: cfg.History, p: cfg.Horizon,
		series: map[string]forecast.Series{}, all: areas}
	if cfg.Smoothing == series.Centered {
		iv.refShift = 3 // the centred average of the last input day needs 3 more reported days
	}
	for _, r := range cfg.Data.Regions {
		iv.series[r.Name] = forecast.Smooth(r, cfg.Smoothing)
	}

	// Calibrate once per ε.
	results := make([]Result, len(cfg.Epsilons))
	for i, eps := range cfg.Epsilons {
		st.Epsilons = append(st.Epsilons, fl.JSONFloat(eps))
		r := &results[i]
		r.Epsilon = fl.JSONFloat(eps)
		r.Runs = cfg.Runs
		r.EpsilonSpent = fl.JSONFloat(math.Inf(1))
		r.Guarantee, r.Strategy, r.Lambda = cfg.Privacy, cfg.Strategy, cfg.Lambda
		if ex, err := cfg.example(eps, cfg.Rounds, cfg.LocalEpochs, cfg.Accountant); err != nil {
			return nil, err
		} else if ex != nil {
			r.Example = &ExampleResult{ExampleDP: *ex}
		}
		if !cfg.clientLevel() {
			r.Epsilon = fl.JSONFloat(math.Inf(1)) // the coordinator adds no noise; the grid's ε is each LHA's
		} else if !math.IsInf(eps, 1) {
			if err := privacy.CheckEpsilon(eps); err != nil {
				return nil, err
			}
			if err := cfg.calibrate(r, sched, eps, q); err != nil {
				return nil, err
			}
		}
	}

	// Per-run splits: shared by all ε (common random numbers).
	splits := make([]runData, cfg.Runs)
	for run := range splits {
		train, test := series.SplitAreas(areas, cfg.Split, trainFraction, fl.NewRand(fl.RunSeed(cfg.Seed, run), fl.StreamSplit))
		if cfg.Embargo {
			train = embargo(train, test)
		}
		splits[run] = newRunData(train, test, cfg.Features)
	}
	base := &Baseline{Name: "persistence"}
	for run := range splits {
		rd := &splits[run]
		p := make([]float64, len(rd.testY))
		model.Persistence(rd.testX, p)
		base.PerRun = append(base.PerRun, metrics.Compute(rd.testY, p))
	}
	bs := summarize(base.PerRun)
	base.Metrics = BaselineMetrics{MAE: bs.MAE, MAPE: bs.MAPE, R2: bs.R2}
	rep.Baseline = base

	type job struct{ eps, run int }
	type outcome struct {
		final   metrics.Result
		run     int
		perArea []float64
		strata  []metrics.Result
		strataN []int
		conv    []float64
		pairsT  []float64
		pairsP  []float64
		iv      intervalRun
		seconds float64
		err     error
		pers    personalOutcome
	}
	jobs := make([]job, 0, len(cfg.Epsilons)*cfg.Runs)
	for r := 0; r < cfg.Runs; r++ {
		for e := range cfg.Epsilons {
			jobs = append(jobs, job{e, r})
		}
	}
	outs := make([]outcome, len(jobs))
	start := time.Now()
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	next := make(chan int)
	// One pool of cfg.Workers slots for runs and clients: each run holds a
	// slot and takes free ones for helpers round by round, so a lone run
	// (or the last runs of a grid) trains its clients on every core.
	pool := fl.NewPool(cfg.Workers)
	for w := 0; w < min(cfg.Workers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := pool.Acquire(ctx); err != nil {
					outs[j].err = err
					continue
				}
				jb := jobs[j]
				o := &outs[j]
				t0 := time.Now()
				rd := &splits[jb.run]
				res := &results[jb.eps]
				fcfg := fl.Config{
					Clients: n, ExpectedClients: cfg.ClientsPerRound, Rounds: cfg.Rounds,
					LocalEpochs: cfg.LocalEpochs, LearningRate: cfg.LearningRate,
				}
				if !math.IsInf(float64(res.Epsilon), 1) {
					fcfg.DP, fcfg.ClipNorm, fcfg.NoiseMultiplier = true, cfg.Clip, res.NoiseMultiplier
					fcfg.Accountant = cfg.Accountant
					fcfg = fcfg.WithSchedule(res.NoiseSchedule)
				}
				ev := newEvaluator(net, cfg.Features, cfg.Damping, rd)
				if cfg.PointForecast == PointPersistence {
					o.run = jb.run
					o.final = ev.evaluatePoint(forecast.Persistence, cfg.History)
					o.perArea = ev.perAreaMAPE()
					o.strata, o.strataN = ev.strata(cfg.Populations)
					if jb.run == 0 {
						o.pairsT, o.pairsP = ev.y, slicesClone(ev.pred)
					}
					o.iv = iv.evaluateIntervals(rd, forecast.Persistence, jb.run == 0)
					o.seconds = time.Since(t0).Seconds()
					pool.Release()
					continue
				}
				avg := newAverager(cfg.AverageLast, cfg.Rounds)
				initial := make([]float64, net.NumParams())
				initRng := fl.NewRand(fl.RunSeed(cfg.Seed, jb.run), fl.StreamInit)
				if cfg.RandomInit {
					cfg.Features.InitRandom(net, initial, initRng)
				} else {
					cfg.Features.Init(net, initial, initRng)
				}
				l, err := newLHAs(net, fcfg, rd.clients, cfg.Strategy, float64(cfg.Lambda), res.exampleSetting(), fl.RunSeed(cfg.Seed, jb.run), cfg.Workers)
				if err != nil {
					pool.Release()
					o.err = err
					continue
				}
				final, err := cfg.train(ctx, &runParams{lhas: l, names: rd.trainNames, initial: initial, res: res, pool: pool,
					onRound: func(round int, g []float64) {
						avg.add(round, g)
						if round%cfg.EvalEvery == 0 {
							o.conv = append(o.conv, ev.evaluate(avg.current(g)).MAPE)
						}
					}})
				if err != nil {
					pool.Release()
					o.err = err
					continue
				}
				o.run = jb.run
				o.pers = evaluatePersonal(l, avg.current(final), net, cfg.Features, cfg.Damping, rd)
				o.final = ev.evaluate(avg.current(final))
				o.perArea = ev.perAreaMAPE()
				o.strata, o.strataN = ev.strata(cfg.Populations)
				if jb.run == 0 {
					o.pairsT, o.pairsP = ev.y, slicesClone(ev.pred)
				}
				o.iv = iv.evaluateIntervals(rd, modelPoint(net, cfg.Features, cfg.Damping, slicesClone(avg.current(final))), jb.run == 0)
				o.seconds = time.Since(t0).Seconds()
				pool.Release()
				mu.Lock()
				done++
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%d/%d] ε=%s run %d: MAE %.2f  MAPE %.1f%%  R² %.3f%s  (%.1f s, %.0f s elapsed)\n",
						done, len(jobs), epsString(float64(res.Epsilon)), jb.run+1, o.final.MAE, o.final.MAPE, o.final.R2,
						res.progressNote(o.pers), o.seconds, time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
	}
	st.WallSeconds = time.Since(start).Seconds()

	strata := metrics.PopulationStrata()
	for e := range results {
		r := &results[e]
		var finals []metrics.Result
		var pers []personalOutcome
		var persRuns []int
		var ivs []intervalRun
		var relMAE, relMAPE []float64
		conv := map[int][]float64{}
		byStratum := make([][]metrics.Result, len(strata))
		stratumAreas := make([]int, len(strata))
		zeros := 0
		for j, jb := range jobs {
			if jb.eps != e {
				continue
			}
			o := outs[j]
			finals = append(finals, o.final)
			pers, persRuns = append(pers, o.pers), append(persRuns, o.run)
			ivs = append(ivs, o.iv)
			b := base.PerRun[o.run]
			relMAE = append(relMAE, o.final.MAE/b.MAE)
			relMAPE = append(relMAPE, o.final.MAPE/b.MAPE)
			r.Seconds += o.seconds
			zeros += o.final.ZeroTargetsDropped
			r.TestWindows = o.final.N
			r.AreaMAPE = append(r.AreaMAPE, o.perArea...)
			for k, v := range o.conv {
				conv[(k+1)*cfg.EvalEvery] = append(conv[(k+1)*cfg.EvalEvery], v)
			}
			for s := range strata {
				if o.strataN[s] > 0 {
					byStratum[s] = append(byStratum[s], o.strata[s])
					stratumAreas[s] = o.strataN[s]
				}
			}
			if o.pairsT != nil {
				r.PairsTrue, r.PairsPred = o.pairsT, o.pairsP
			}
		}
		r.PerRun = finals
		r.Metrics = summarize(finals)
		if cfg.PointForecast != PointPersistence {
			summarizeStrategy(r, pers, base.PerRun, persRuns)
		}
		summarizeIntervals(r, ivs)
		rm, rp := metrics.Summarize(relMAE), metrics.Summarize(relMAPE)
		r.RelativeMAE, r.RelativeMAPE = &rm, &rp
		r.ZeroTargets = int(math.Round(float64(zeros) / float64(len(finals))))
		for s, st := range strata {
			if len(byStratum[s]) > 0 {
				r.ByPopulation = append(r.ByPopulation, StratumResult{Stratum: st.Name, Areas: stratumAreas[s], Metrics: summarize(byStratum[s])})
			}
		}
		rounds := make([]int, 0, len(conv))
		for k := range conv {
			rounds = append(rounds, k)
		}
		sort.Ints(rounds)
		for _, k := range rounds {
			r.Convergence = append(r.Convergence, ConvergencePoint{Round: k, MAPE: metrics.Summarize(conv[k])})
		}
	}
	rep.Results = results
	return rep, nil
}

// runData is one run's split, as training clients and test windows.
type runData struct {
	clients []fl.ClientData
	testX   []float64
	testY   []float64
	// testArea[i] is the area index of test window i; areaNames by index.
	testArea  []int
	areaNames []string
	// testEnd[i] is the last input day of test window i; testIdx[a] the
	// indices of area a's test windows.
	testEnd []time.Time
	testIdx [][]int
	// trainNames[k] is the area of client k.
	trainNames []string
}

func newRunData(train, test []series.Area, f model.Features) runData {
	rd := runData{clients: make([]fl.ClientData, len(train))}
	for i, a := range train {
		rd.trainNames = append(rd.trainNames, a.Region)
		x, y := f.Stack([]series.Area{a})
		rd.clients[i] = fl.ClientData{X: x, Y: y}
	}
	rd.testIdx = make([][]int, len(test))
	for i, a := range test {
		rd.areaNames = append(rd.areaNames, a.Region)
		for _, w := range a.Windows {
			rd.testIdx[i] = append(rd.testIdx[i], len(rd.testY))
			rd.testEnd = append(rd.testEnd, w.InputEnd)
			rd.testX = append(rd.testX, w.X...)
			rd.testY = append(rd.testY, w.Y)
			rd.testArea = append(rd.testArea, i)
		}
	}
	return rd
}

// evaluator predicts the test windows of one run.
type evaluator struct {
	model    *nn.MLP
	features model.Features
	damping  float64
	rd       *runData
	y        []float64
	pred     []float64
}

func newEvaluator(m *nn.MLP, f model.Features, damping float64, rd *runData) *evaluator {
	return &evaluator{model: m, features: f, damping: damping, rd: rd, y: rd.testY, pred: make([]float64, len(rd.testY))}
}

func (e *evaluator) evaluate(global []float64) metrics.Result {
	e.features.PredictDamped(e.model, global, e.rd.testX, e.pred, e.damping)
	return metrics.Compute(e.y, e.pred)
}

// evaluatePoint predicts the test windows with a point forecaster.
func (e *evaluator) evaluatePoint(point forecast.Point, h int) metrics.Result {
	for i := range e.pred {
		e.pred[i] = point(e.rd.testX[i*h : (i+1)*h])
	}
	return metrics.Compute(e.y, e.pred)
}

// modelPoint is the point forecaster of a trained model under the study's
// design (features, damping): the same forecast the evaluator and the LHA
// page make. One per goroutine: it reuses its output slice.
func modelPoint(m *nn.MLP, f model.Features, damping float64, params []float64) forecast.Point {
	out := make([]float64, 1)
	return func(x []float64) float64 {
		f.PredictDamped(m, params, x, out, damping)
		return out[0]
	}
}

// averager keeps the running mean of the global models after the last k
// of T rounds (k ≤ 1: none; the released model is the last one).
type averager struct {
	k, rounds, n int
	sum, mean    []float64
}

func newAverager(k, rounds int) *averager { return &averager{k: min(k, rounds), rounds: rounds} }

func (a *averager) add(round int, g []float64) {
	if a.k <= 1 || round <= a.rounds-a.k {
		return
	}
	if a.sum == nil {
		a.sum, a.mean = make([]float64, len(g)), make([]float64, len(g))
	}
	for i, v := range g {
		a.sum[i] += v
	}
	a.n++
}

// current returns the model to evaluate: the mean so far once averaging
// has begun, else g.
func (a *averager) current(g []float64) []float64 {
	if a.n == 0 {
		return g
	}
	for i, s := range a.sum {
		a.mean[i] = s / float64(a.n)
	}
	return a.mean
}

// perAreaMAPE returns each area's MAPE from the last evaluate (areas whose
// test targets are all zero are left out).
func (e *evaluator) perAreaMAPE() []float64 {
	var out []float64
	for a := range e.rd.areaNames {
		var y, p []float64
		for i, ai := range e.rd.testArea {
			if ai == a {
				y, p = append(y, e.y[i]), append(p, e.pred[i])
			}
		}
		if m, _ := metrics.MAPE(y, p); !math.IsNaN(m) {
			out = append(out, m)
		}
	}
	return out
}

// strata returns the pooled metrics of the last evaluate per population
// stratum, and the number of areas in each.
func (e *evaluator) strata(pop map[string]float64) ([]metrics.Result, []int) {
	ss := metrics.PopulationStrata()
	ys := make([][]float64, len(ss))
	ps := make([][]float64, len(ss))
	areas := make([]int, len(ss))
	for a, name := range e.rd.areaNames {
		p, ok := pop[name]
		if !ok {
			continue
		}
		s := metrics.StratumOf(p)
		if s < 0 {
			continue
		}
		areas[s]++
		for i, ai := range e.rd.testArea {
			if ai == a {
				ys[s], ps[s] = append(ys[s], e.y[i]), append(ps[s], e.pred[i])
			}
		}
	}
	out := make([]metrics.Result, len(ss))
	for s := range ss {
		if areas[s] > 0 {
			out[s] = metrics.Compute(ys[s], ps[s])
		}
	}
	return out, areas
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
