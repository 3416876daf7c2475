package experiment

import (
	"context"
	"errors"
	"fmt"
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

const trainFraction = 0.9

// Run executes the experiment: it checks the setting, cuts every area's
// windows, calibrates the noise per ε, splits each run's data, trains
// every (ε, run) study (train: the study engine's Coordinator with the
// LHAs in process) on a shared pool of workers, evaluates it, and
// summarises the runs per ε.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	sched, err := cfg.check()
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
	rep := &Report{Setting: newSetting(cfg, areas, q)}
	results, err := cfg.calibrateAll(&rep.Setting, sched, q)
	if err != nil {
		return nil, err
	}
	x := &experiment{cfg: cfg, n: n, results: results, iv: newIntervalInputs(cfg, areas),
		net: nn.NewMLP(rep.Setting.Model...)}
	x.splits = cfg.splitRuns(areas)
	x.base = persistenceBaseline(x.splits)
	rep.Baseline = x.base
	start := time.Now()
	if err := x.runAll(ctx); err != nil {
		return nil, err
	}
	rep.Setting.WallSeconds = time.Since(start).Seconds()
	x.summarize()
	rep.Results = results
	return rep, nil
}

// check fills the defaults, checks the setting and returns the parsed
// noise schedule.
func (c *Config) check() (privacy.Schedule, error) {
	c.defaults()
	if c.Data == nil || len(c.Data.Regions) == 0 {
		return privacy.Schedule{}, errors.New("experiment: no case data")
	}
	if len(c.Epsilons) == 0 {
		return privacy.Schedule{}, errors.New("experiment: no ε given")
	}
	if err := checkPointForecast(c.PointForecast); err != nil {
		return privacy.Schedule{}, err
	}
	if err := c.Calibration.Validate(); err != nil {
		return privacy.Schedule{}, err
	}
	if err := model.CheckDamping(c.Damping); err != nil {
		return privacy.Schedule{}, err
	}
	if err := c.strategyDefaults(c.Delta); err != nil {
		return privacy.Schedule{}, err
	}
	return c.checkStrategy()
}

// newSetting records the setting of an experiment on areas at sampling
// rate q (everything but the ε grid, filled by calibrateAll, and the wall
// time).
func newSetting(cfg Config, areas []series.Area, q float64) Setting {
	st := Setting{Config: cfg, From: dateString(cfg.From), To: dateString(cfg.To),
		Smoothing: smoothingName(cfg.Smoothing), Split: splitName(cfg.Split), Areas: len(areas), SampleRate: q,
		TrainFraction: trainFraction, Model: append(append([]int{cfg.History}, cfg.Hidden...), 1),
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), Accountant: string(cfg.Accountant),
		NoiseSource:    "seeded PCG streams (research run: reproducible noise, never for release)",
		WindowsPerArea: [2]int{math.MaxInt, 0}}
	for _, a := range areas {
		st.WindowsPerArea[0] = min(st.WindowsPerArea[0], len(a.Windows))
		st.WindowsPerArea[1] = max(st.WindowsPerArea[1], len(a.Windows))
	}
	return st
}

// newIntervalInputs holds what the quantile forecasts of every run need:
// each area's smoothed series and windows.
func newIntervalInputs(cfg Config, areas []series.Area) *intervalInputs {
	iv := &intervalInputs{cal: cfg.Calibration, h: cfg.History, p: cfg.Horizon,
		series: map[string]forecast.Series{}, all: areas}
	if cfg.Smoothing == series.Centered {
		iv.refShift = 3 // the centred average of the last input day needs 3 more reported days
	}
	for _, r := range cfg.Data.Regions {
		iv.series[r.Name] = forecast.Smooth(r, cfg.Smoothing)
	}
	return iv
}

// calibrateAll makes one result per ε of the grid, with its noise
// calibrated (once per ε, for every run) at sampling rate q, and records
// the grid in st.
func (c *Config) calibrateAll(st *Setting, sched privacy.Schedule, q float64) ([]Result, error) {
	results := make([]Result, len(c.Epsilons))
	for i, eps := range c.Epsilons {
		st.Epsilons = append(st.Epsilons, fl.JSONFloat(eps))
		r := &results[i]
		r.Epsilon = fl.JSONFloat(eps)
		r.Runs = c.Runs
		r.EpsilonSpent = fl.JSONFloat(math.Inf(1))
		r.Guarantee, r.Strategy, r.Lambda = c.Privacy, c.Strategy, c.Lambda
		if ex, err := c.example(eps, c.Rounds, c.LocalEpochs, c.Accountant); err != nil {
			return nil, err
		} else if ex != nil {
			r.Example = &ExampleResult{ExampleDP: *ex}
		}
		switch {
		case !c.clientLevel():
			r.Epsilon = fl.JSONFloat(math.Inf(1)) // the coordinator adds no noise; the grid's ε is each LHA's
		case !math.IsInf(eps, 1):
			if err := privacy.CheckEpsilon(eps); err != nil {
				return nil, err
			}
			if err := c.calibrate(r, sched, eps, q); err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// splitRuns splits the areas' windows per run (shared by all ε: common
// random numbers).
func (c *Config) splitRuns(areas []series.Area) []runData {
	splits := make([]runData, c.Runs)
	for run := range splits {
		train, test := series.SplitAreas(areas, c.Split, trainFraction, fl.NewRand(fl.RunSeed(c.Seed, run), fl.StreamSplit))
		if c.Embargo {
			train = embargo(train, test)
		}
		splits[run] = newRunData(train, test, c.Features)
	}
	return splits
}

// persistenceBaseline is persistence on each run's test windows.
func persistenceBaseline(splits []runData) *Baseline {
	base := &Baseline{Name: "persistence"}
	for run := range splits {
		rd := &splits[run]
		p := make([]float64, len(rd.testY))
		model.Persistence(rd.testX, p)
		base.PerRun = append(base.PerRun, metrics.Compute(rd.testY, p))
	}
	bs := summarize(base.PerRun)
	base.Metrics = BaselineMetrics{MAE: bs.MAE, MAPE: bs.MAPE, R2: bs.R2}
	return base
}

// experiment is one Run in progress: its setting, the per-ε results, the
// per-run data and the (ε, run) jobs with their outcomes.
type experiment struct {
	cfg     Config
	n       int
	net     *nn.MLP
	results []Result
	iv      *intervalInputs
	splits  []runData
	base    *Baseline
	jobs    []job
	outs    []outcome
}

// job is one study: result eps of the grid, run run.
type job struct{ eps, run int }

// outcome is a job's evaluation.
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

// runAll runs every job on cfg.Workers goroutines sharing one pool of
// cfg.Workers slots for runs and LHAs: each run holds a slot and takes
// free ones for helpers round by round, so a lone run (or the last runs
// of a grid) trains its LHAs on every core.
func (x *experiment) runAll(ctx context.Context) error {
	cfg := &x.cfg
	for r := 0; r < cfg.Runs; r++ {
		for e := range cfg.Epsilons {
			x.jobs = append(x.jobs, job{e, r})
		}
	}
	x.outs = make([]outcome, len(x.jobs))
	start := time.Now()
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	next := make(chan int)
	pool := fl.NewPool(cfg.Workers)
	for w := 0; w < min(cfg.Workers, len(x.jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := pool.Acquire(ctx); err != nil {
					x.outs[j].err = err
					continue
				}
				x.outs[j] = x.runJob(ctx, x.jobs[j], pool)
				pool.Release()
				o, res, jb := &x.outs[j], &x.results[x.jobs[j].eps], x.jobs[j]
				if o.err != nil || cfg.PointForecast == PointPersistence {
					continue
				}
				mu.Lock()
				done++
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%d/%d] ε=%s run %d: MAE %.2f  MAPE %.1f%%  R² %.3f%s  (%.1f s, %.0f s elapsed)\n",
						done, len(x.jobs), epsString(float64(res.Epsilon)), jb.run+1, o.final.MAE, o.final.MAPE, o.final.R2,
						res.progressNote(o.pers), o.seconds, time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for j := range x.jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, o := range x.outs {
		if o.err != nil {
			return o.err
		}
	}
	return nil
}

// runJob trains and evaluates one study (or, with the persistence
// forecaster, only evaluates); the calling goroutine holds a slot of pool.
func (x *experiment) runJob(ctx context.Context, jb job, pool *fl.Pool) outcome {
	cfg := &x.cfg
	t0 := time.Now()
	rd := &x.splits[jb.run]
	res := &x.results[jb.eps]
	ev := newEvaluator(x.net, cfg.Features, cfg.Damping, rd)
	o := outcome{run: jb.run}
	var point forecast.Point
	if cfg.PointForecast == PointPersistence {
		o.final = ev.evaluatePoint(forecast.Persistence, cfg.History)
		point = forecast.Persistence
	} else {
		avg := newAverager(cfg.AverageLast, cfg.Rounds)
		l, initial, err := x.newRun(jb, res, rd)
		if err != nil {
			return outcome{err: err}
		}
		final, err := cfg.train(ctx, &runParams{lhas: l, names: rd.trainNames, initial: initial, res: res, pool: pool,
			onRound: func(round int, g []float64) {
				avg.add(round, g)
				if round%cfg.EvalEvery == 0 {
					o.conv = append(o.conv, ev.evaluate(avg.current(g)).MAPE)
				}
			}})
		if err != nil {
			return outcome{err: err}
		}
		o.pers = evaluatePersonal(l, avg.current(final), x.net, cfg.Features, cfg.Damping, rd)
		o.final = ev.evaluate(avg.current(final))
		point = modelPoint(x.net, cfg.Features, cfg.Damping, slicesClone(avg.current(final)))
	}
	o.perArea = ev.perAreaMAPE()
	o.strata, o.strataN = ev.strata(cfg.Populations)
	if jb.run == 0 {
		o.pairsT, o.pairsP = ev.y, slicesClone(ev.pred)
	}
	o.iv = x.iv.evaluateIntervals(rd, point, jb.run == 0)
	o.seconds = time.Since(t0).Seconds()
	return o
}

// newRun makes job jb's LHAs (their setting: the result's noise and
// schedule) and its initial model (from the run's seed: the same for
// every ε).
func (x *experiment) newRun(jb job, res *Result, rd *runData) (*lhas, []float64, error) {
	cfg := &x.cfg
	fcfg := fl.Config{
		Clients: x.n, ExpectedClients: cfg.ClientsPerRound, Rounds: cfg.Rounds,
		LocalEpochs: cfg.LocalEpochs, LearningRate: cfg.LearningRate,
	}
	if !math.IsInf(float64(res.Epsilon), 1) {
		fcfg.DP, fcfg.ClipNorm, fcfg.NoiseMultiplier = true, cfg.Clip, res.NoiseMultiplier
		fcfg.Accountant = cfg.Accountant
		fcfg = fcfg.WithSchedule(res.NoiseSchedule)
	}
	seed := fl.RunSeed(cfg.Seed, jb.run)
	initial := make([]float64, x.net.NumParams())
	initRng := fl.NewRand(seed, fl.StreamInit)
	if cfg.RandomInit {
		cfg.Features.InitRandom(x.net, initial, initRng)
	} else {
		cfg.Features.Init(x.net, initial, initRng)
	}
	l, err := newLHAs(x.net, fcfg, rd.clients, cfg.StrategyOptions, res.exampleSetting(), seed, cfg.Workers)
	return l, initial, err
}

// summarize fills every result from its runs' outcomes.
func (x *experiment) summarize() {
	for e := range x.results {
		var outs []outcome
		for j, jb := range x.jobs {
			if jb.eps == e {
				outs = append(outs, x.outs[j])
			}
		}
		x.summarizeResult(&x.results[e], outs)
	}
}

// summarizeResult fills r from its runs' outcomes: the metrics, the
// ratios to the baseline, the strata, the convergence, the personal and
// interval summaries.
func (x *experiment) summarizeResult(r *Result, outs []outcome) {
	strata := metrics.PopulationStrata()
	var finals []metrics.Result
	var pers []personalOutcome
	var persRuns []int
	var ivs []intervalRun
	var relMAE, relMAPE []float64
	conv := map[int][]float64{}
	byStratum := make([][]metrics.Result, len(strata))
	stratumAreas := make([]int, len(strata))
	zeros := 0
	for _, o := range outs {
		finals = append(finals, o.final)
		pers, persRuns = append(pers, o.pers), append(persRuns, o.run)
		ivs = append(ivs, o.iv)
		b := x.base.PerRun[o.run]
		relMAE = append(relMAE, o.final.MAE/b.MAE)
		relMAPE = append(relMAPE, o.final.MAPE/b.MAPE)
		r.Seconds += o.seconds
		zeros += o.final.ZeroTargetsDropped
		r.TestWindows = o.final.N
		r.AreaMAPE = append(r.AreaMAPE, o.perArea...)
		for k, v := range o.conv {
			conv[(k+1)*x.cfg.EvalEvery] = append(conv[(k+1)*x.cfg.EvalEvery], v)
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
	if x.cfg.PointForecast != PointPersistence {
		summarizeStrategy(r, pers, x.base.PerRun, persRuns)
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
