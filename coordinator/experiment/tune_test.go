package experiment

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/synth"
)

// The synthetic tuning harness of the default design (docs/results.md,
// "Beyond the paper"). It never reads the real data: each scenario is a
// shared/synth outbreak of 400 areas evaluated like the study months
// (2020-11-01 … 2020-12-01, temporal split). Run it with
//
//	FEDCAST_TUNE=1 go test ./coordinator/experiment -run TestTuneDesign -v -timeout 1h
//
// FEDCAST_TUNE_VARIANTS (a regular expression) picks variants by name,
// FEDCAST_TUNE_EPS the ε (default 1), FEDCAST_TUNE_SEEDS the seeds
// (default 11,12), FEDCAST_TUNE_RUNS the runs per seed (default 1). It
// prints, per variant, each scenario's relative MAE, 50 % and 95 %
// coverage and relative WIS, and their mean and worst over scenarios.
// FEDCAST_TUNE_EMBARGO=1 drops each area's training windows whose target
// comes after its first test origin (simulate --embargo: no look-ahead).

// tuneScenario is one synthetic outbreak of the harness.
type tuneScenario struct {
	name string
	opt  synth.Options
}

// designScenarios: growth, peaks, declines, plateaus, in large and small
// counts. None of them is among the pretraining outbreaks
// (model.PretrainCorpus uses other seeds and settings).
var designScenarios = []tuneScenario{
	{"wave", synth.Options{}},
	{"growth", synth.Options{NoIntervention: true, R0: 1.15}},
	{"late", synth.Options{InterventionDay: 60, R0: 1.3}},
	{"small", synth.Options{InitialPrevalence: 10}},
	{"plateau", synth.Options{InterventionDay: 31, InterventionEffect: 0.29}},
	{"smallplat", synth.Options{InterventionDay: 31, InterventionEffect: 0.29, InitialPrevalence: 10}},
	{"decline", synth.Options{R0: 1.8, InterventionDay: 22, InterventionEffect: 0.6, InterventionRamp: 6}},
	{"turndown", synth.Options{R0: 1.5, InterventionDay: 38, InterventionEffect: 0.5, InterventionRamp: 4}},
}

// tuneVariant is one design under test: a change to the default's Config.
type tuneVariant struct {
	name string
	set  func(*Config)
}

func defaultTuneConfig() Config {
	d := model.Default
	return Config{
		History: d.History, Rounds: d.Rounds, ClientsPerRound: 400, LocalEpochs: d.LocalEpochs, Clip: d.Clip,
		LearningRate: d.LearningRate, Hidden: append([]int{}, d.Hidden...), Features: d.Features,
		Damping: d.Damping, Preset: d.Name, Accountant: "rdp",
	}
}

func calib(f func(*forecast.Calibrator)) func(*Config) {
	return func(c *Config) {
		c.Calibration = forecast.DefaultCalibrator()
		f(&c.Calibration)
	}
}

var tuneVariants = []tuneVariant{
	{"default", func(*Config) {}},
	// The default before pretraining (T = 10, random start, 14-day
	// intervals without the change term).
	{"previous", func(c *Config) {
		c.Rounds, c.RandomInit = 10, true
		c.Calibration = forecast.DefaultCalibrator()
		c.Calibration.Lookback, c.Calibration.Change = 14, 0
	}},
	{"rounds10", func(c *Config) { c.Rounds = 10 }},
	{"persistence", func(c *Config) { c.PointForecast = PointPersistence }},
	{"random-init", func(c *Config) { c.RandomInit = true }},
	{"random-init-d1", func(c *Config) { c.RandomInit = true; c.Damping = 1 }},
	{"random-init-d0.25", func(c *Config) { c.RandomInit = true; c.Damping = 0.25 }},
	{"damp1", func(c *Config) { c.Damping = 1 }},
	{"damp0.75", func(c *Config) { c.Damping = 0.75 }},
	{"damp0.25", func(c *Config) { c.Damping = 0.25 }},
	{"avg5", func(c *Config) { c.AverageLast = 5 }},
	{"rounds5", func(c *Config) { c.Rounds = 5 }},
	{"rounds3", func(c *Config) { c.Rounds = 3 }},
	{"rounds5-random-init", func(c *Config) { c.Rounds = 5; c.RandomInit = true }},
	{"rounds5-damp0.4", func(c *Config) { c.Rounds = 5; c.Damping = 0.4 }},
	{"rounds5-damp0.6", func(c *Config) { c.Rounds = 5; c.Damping = 0.6 }},
	{"rounds5-avg3", func(c *Config) { c.Rounds = 5; c.AverageLast = 3 }},
	{"rounds5-clip0.2", func(c *Config) { c.Rounds = 5; c.Clip = 0.2 }},
	{"rounds20", func(c *Config) { c.Rounds = 20 }},
	{"clip0.2", func(c *Config) { c.Clip = 0.2 }},
	{"lr0.01", func(c *Config) { c.LearningRate = 0.01 }}, // the third round's default
	{"lr0.003", func(c *Config) { c.LearningRate = 0.003 }},
	// Fourth round (docs/results.md): the PLD accountant calibrates less
	// noise for the same (ε, δ); learning rates around 0.003.
	{"pld", func(c *Config) { c.Accountant = "pld" }},
	{"lr0.003-pld", func(c *Config) { c.LearningRate = 0.003; c.Accountant = "pld" }},
	{"lr0.002", func(c *Config) { c.LearningRate = 0.002 }},
	{"lr0.005", func(c *Config) { c.LearningRate = 0.005 }},
	{"lr0.0015", func(c *Config) { c.LearningRate = 0.0015 }},
	{"lr0.001", func(c *Config) { c.LearningRate = 0.001 }},
	{"lr0.0005", func(c *Config) { c.LearningRate = 0.0005 }},
	{"shift0", calib(func(k *forecast.Calibrator) { k.Shift = 0 })},
	{"shift0.25", calib(func(k *forecast.Calibrator) { k.Shift = 0.25 })},
	{"shift1", calib(func(k *forecast.Calibrator) { k.Shift = 1 })},
	{"shift0.75", calib(func(k *forecast.Calibrator) { k.Shift = 0.75 })},
	{"trend1", calib(func(k *forecast.Calibrator) { k.Trend = 1 })},
	{"lookback7", calib(func(k *forecast.Calibrator) { k.Lookback = 7 })},
	{"lookback21", calib(func(k *forecast.Calibrator) { k.Lookback = 21 })},
	{"change0.5", calib(func(k *forecast.Calibrator) { k.Change = 0.5 })},
	{"change1", calib(func(k *forecast.Calibrator) { k.Change = 1 })},
	{"change1-shift1", calib(func(k *forecast.Calibrator) { k.Change = 1; k.Shift = 1 })},
	{"prior0.15", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15 })},
	{"prior0.2", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.2 })},
	{"prior0.15-k3", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15; k.PriorWeight = 3 })},
	{"prior0.15-change1", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15; k.Change = 1 })},
	{"prior0.15-change0.5", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15; k.Change = 0.5 })},
	{"prior0.15-shift1", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15; k.Shift = 1 })},
	{"prior0.15-trend1", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.15; k.Trend = 1 })},
	{"tail0.85", calib(func(k *forecast.Calibrator) { k.Tail = 0.85 })},
	{"lb14", calib(func(k *forecast.Calibrator) { k.Lookback = 14; k.Change = 0 })},
	{"lb14-change0.5", calib(func(k *forecast.Calibrator) { k.Lookback = 14; k.Change = 0.5 })},
	{"lb14-change1", calib(func(k *forecast.Calibrator) { k.Lookback = 14; k.Change = 1 })},
	{"lb7", calib(func(k *forecast.Calibrator) { k.Lookback = 7; k.Change = 0 })},
	{"lb7-change0.5", calib(func(k *forecast.Calibrator) { k.Lookback = 7; k.Change = 0.5 })},
	{"lb7-change1", calib(func(k *forecast.Calibrator) { k.Lookback = 7; k.Change = 1 })},
	{"lb10-change1", calib(func(k *forecast.Calibrator) { k.Lookback = 10; k.Change = 1 })},
	{"lb7-prior0.2-change1", calib(func(k *forecast.Calibrator) { k.Lookback = 7; k.PriorScale = 0.2; k.Change = 1 })},
	{"lb7-k3-change1", calib(func(k *forecast.Calibrator) { k.Lookback = 7; k.PriorWeight = 3; k.Change = 1 })},
	{"history14", func(c *Config) { c.History = 14 }},
	// Input days H (the default: 13). Beyond 13 a one-month study keeps
	// one test window per area instead of two: other target days, so not
	// comparable with the default.
	{"history10", func(c *Config) { c.History = 10 }},
	{"history11", func(c *Config) { c.History = 11 }},
	{"history12", func(c *Config) { c.History = 12 }},
	{"history16", func(c *Config) { c.History = 16 }},
	{"history18", func(c *Config) { c.History = 18 }},
	{"history21", func(c *Config) { c.History = 21 }},
	{"history7", func(c *Config) { c.History = 7 }},
	{"hidden8", func(c *Config) { c.Hidden = []int{8} }},
	{"hidden32", func(c *Config) { c.Hidden = []int{32} }},
	{"linear", func(c *Config) { c.Hidden = nil }},
	// The pretrained model alone: one round whose steps cannot move it.
	{"pretrained-only", func(c *Config) { c.Rounds = 1; c.LearningRate = 1e-12 }},
	{"prior0.35", calib(func(k *forecast.Calibrator) { k.PriorScale = 0.35 })},
}

func envList(t *testing.T, name, def string) []float64 {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		var v float64
		if _, err := fmt.Sscan(f, &v); err != nil {
			t.Fatalf("%s: %q: %v", name, f, err)
		}
		out = append(out, v)
	}
	return out
}

func TestTuneDesign(t *testing.T) {
	if os.Getenv("FEDCAST_TUNE") == "" {
		t.Skip("set FEDCAST_TUNE=1 to run the synthetic tuning harness (minutes)")
	}
	pick := regexp.MustCompile(os.Getenv("FEDCAST_TUNE_VARIANTS"))
	eps := envList(t, "FEDCAST_TUNE_EPS", "1")
	seeds := envList(t, "FEDCAST_TUNE_SEEDS", "11,12")
	runs := int(envList(t, "FEDCAST_TUNE_RUNS", "1")[0])
	from, to := time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC)
	type data struct {
		cfg  Config
		name string
	}
	var datas []data
	sets := map[string]bool{}
	for _, s := range strings.Split(cmp.Or(os.Getenv("FEDCAST_TUNE_SETS"), "clean,noisy"), ",") {
		sets[s] = true
	}
	var scen []tuneScenario
	for _, sc := range designScenarios {
		if sets["clean"] {
			scen = append(scen, sc)
		}
		// The same outbreak as irregular as real counties: waves turning
		// at different times, drifting detection, bursty reporting.
		noisy := sc
		noisy.name += "~"
		noisy.opt.TimingSpread, noisy.opt.DetectionDrift, noisy.opt.ReportingNoise = 7, 0.03, 0.5
		if sets["noisy"] {
			scen = append(scen, noisy)
		}
		// Harder still, with testing winding down (reported cases fall
		// faster than infections).
		hard := sc
		hard.name += "≈"
		hard.opt.TimingSpread, hard.opt.DetectionDrift, hard.opt.ReportingNoise, hard.opt.DetectionTrend = 10, 0.05, 0.8, -0.01
		if sets["hard"] {
			scen = append(scen, hard)
		}
	}
	for _, sc := range scen {
		for _, seed := range seeds {
			o := sc.opt
			o.Areas, o.Seed = 400, uint64(seed)
			d, _, err := synth.Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			datas = append(datas, data{Config{Data: d, From: from, To: to}, sc.name})
		}
	}
	for _, v := range tuneVariants {
		if !pick.MatchString(v.name) {
			continue
		}
		t0 := time.Now()
		type acc struct{ rel, c50, c95, wis float64 }
		// byScen[e][scenario]: ε index e.
		byScen := make([]map[string]*acc, len(eps))
		for e := range byScen {
			byScen[e] = map[string]*acc{}
		}
		var order []string
		for _, ds := range datas {
			cfg := defaultTuneConfig()
			v.set(&cfg)
			cfg.Data, cfg.From, cfg.To = ds.cfg.Data, ds.cfg.From, ds.cfg.To
			cfg.Epsilons, cfg.Runs, cfg.Seed, cfg.EvalEvery = eps, runs, 1, 1000
			cfg.Embargo = os.Getenv("FEDCAST_TUNE_EMBARGO") == "1"
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", v.name, ds.name, err)
			}
			if byScen[0][ds.name] == nil {
				order = append(order, ds.name)
				for e := range eps {
					byScen[e][ds.name] = &acc{}
				}
			}
			w := 1 / float64(len(seeds))
			for e, r := range rep.Results {
				a := byScen[e][ds.name]
				a.rel += w * r.RelativeMAE.Mean
				a.c50 += w * r.Coverage50.Mean
				a.c95 += w * r.Coverage95.Mean
				a.wis += w * r.RelativeWIS.Mean
			}
		}
		for e, ep := range eps {
			line := fmt.Sprintf("%-18s ε=%g", v.name, ep)
			var mean acc
			worst := acc{rel: 0, c50: 1, c95: 1, wis: 0}
			dev50 := 0.0
			for _, s := range order {
				a := byScen[e][s]
				line += fmt.Sprintf(" %s %.3f %.2f/%.2f %.3f |", s, a.rel, a.c50, a.c95, a.wis)
				n := float64(len(order))
				mean.rel += a.rel / n
				mean.c50 += a.c50 / n
				mean.c95 += a.c95 / n
				mean.wis += a.wis / n
				worst.rel = math.Max(worst.rel, a.rel)
				worst.c95 = math.Min(worst.c95, a.c95)
				worst.wis = math.Max(worst.wis, a.wis)
				dev50 = math.Max(dev50, math.Abs(a.c50-0.5))
			}
			fmt.Printf("%s\n   => relMAE mean %.3f worst %.3f | cov50 mean %.2f maxdev %.2f | cov95 mean %.2f worst %.2f | relWIS mean %.3f worst %.3f (%.0f s)\n",
				line, mean.rel, worst.rel, mean.c50, dev50, mean.c95, worst.c95, mean.wis, worst.wis, time.Since(t0).Seconds())
		}
	}
}
