package backtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/series"
)

// LipschitzDesign is the publishable design (issue 27): publish.Forecaster
// over the area's own daily counts, a network of Weeks−1 inputs whose
// layers are projected to spectral norm ≤ 1 on every released model, and
// a public range. It is trained by the federated path like any design
// (client-level DP unchanged); the projection is post-processing that
// every LHA and the coordinator do the same way (ReleasedForecaster).
type LipschitzDesign struct {
	Kappa     float64
	Weeks     int
	Damping   float64
	Spread    float64
	TrainDays int
	Seed      uint64

	mlp    *nn.MLP
	recipe model.Design
}

// NewLipschitzDesign returns the design with κ = publish.DefaultKappa,
// 3 input weeks, damping 0.1, the public spread publish.DefaultSpread and
// training windows ending in the last 56 known days.
func NewLipschitzDesign(seed uint64) *LipschitzDesign {
	d := &LipschitzDesign{Kappa: publish.DefaultKappa, Weeks: 3, Damping: 0.1, Spread: publish.DefaultSpread, TrainDays: 56, Seed: seed}
	hidden := []int{8}
	d.mlp = nn.NewMLP(append(append([]int{d.Weeks - 1}, hidden...), 1)...)
	d.recipe = model.Design{Name: "lipschitz", Features: model.LogChange, History: d.Weeks - 1, Hidden: hidden,
		Rounds: 5, SampleRate: 1, LocalEpochs: 30, Clip: 0.5, LearningRate: 0.01, Damping: d.Damping, Accountant: "rdp"}
	return d
}

func init() {
	registerDesign("lipschitz", func(seed uint64) (Design, error) { return NewLipschitzDesign(seed), nil })
}

// Recipe is the federated schedule: every LHA in each of 5 rounds, E = 30,
// S = 0.5, learning rate 0.01, RDP.
func (d *LipschitzDesign) Recipe() model.Design { return d.recipe }

// Layers are Weeks−1 inputs, 8 hidden units, 1 output.
func (d *LipschitzDesign) Layers() []int { return d.mlp.Sizes() }

// Init starts from the previous campaign's released model, projected; the
// first campaign from a random hidden layer and a zero output layer (the
// no-change forecast).
func (d *LipschitzDesign) Init(dst, previous []float64) {
	if previous != nil {
		copy(dst, previous)
	} else {
		model.LogChange.InitRandom(d.mlp, dst, fl.NewRand(d.Seed, fl.StreamInit))
	}
	d.mlp.ProjectSpectral(dst)
}

// LocalTrainer is a design that takes its local training steps its own
// way; the update is still clipped to S as fl.LocalUpdate clips it (and
// re-clipped by the round engine), so the client-level DP is unchanged.
type LocalTrainer interface {
	LocalTrain(t *nn.Trainer, params, x, y []float64, cfg fl.Config)
}

// localUpdate is fl.LocalUpdate, with the design's own local steps when it
// is a LocalTrainer.
func localUpdate(d Design, t *nn.Trainer, global, x, y []float64, cfg fl.Config, dst []float64) {
	lt, ok := d.(LocalTrainer)
	if !ok || len(y) == 0 {
		fl.LocalUpdate(t, global, x, y, cfg, dst)
		return
	}
	copy(dst, global)
	lt.LocalTrain(t, dst, x, y, cfg)
	for i, g := range global {
		dst[i] -= g
	}
	if cfg.DP {
		privacy.ClipL2(dst, cfg.ClipNorm)
	}
}

// LocalTrain takes cfg.LocalEpochs Adam steps with spectral normalisation
// after each (one power-iteration step per layer), so that the layers stay
// near norm 1 while the model learns.
func (d *LipschitzDesign) LocalTrain(t *nn.Trainer, params, x, y []float64, cfg fl.Config) {
	t.TrainSpectral(params, x, y, cfg.LocalEpochs, nn.AdamOptions{LearningRate: cfg.LearningRate}, 1)
}

// ReleasedForecaster returns the forecaster of a released model: a copy of
// params projected to spectral norm ≤ 1 per layer.
func (d *LipschitzDesign) ReleasedForecaster(params []float64) *publish.Forecaster {
	p := append([]float64(nil), params...)
	d.mlp.ProjectSpectral(p)
	return &publish.Forecaster{Kappa: d.Kappa, Weeks: d.Weeks, Damping: d.Damping, Net: d.mlp, Params: p}
}

// dailyUntil returns r's counts up to and including day, with days before
// the series start read as 0 (public: nothing reported), at least n long.
func dailyUntil(r *series.Region, day time.Time, n int) []float64 {
	end := r.Index(day) + 1
	end = min(end, len(r.Cases))
	out := make([]float64, 0, n)
	for i := end - n; i < end; i++ {
		if i < 0 {
			out = append(out, 0)
		} else {
			out = append(out, r.Cases[i])
		}
	}
	return out
}

// Training returns, for every day e of the last TrainDays known days whose
// next week is known, the inputs z (publish.Forecaster's) at e and the
// target log(κ + next week's average) − u_0.
func (d *LipschitzDesign) Training(own *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error) {
	f := d.ReleasedForecaster(make([]float64, d.mlp.NumParams()))
	for _, r := range own.Regions {
		for back := WeekDays + d.TrainDays - 1; back >= WeekDays; back-- {
			e := pub.Known.AddDate(0, 0, -back)
			if r.Index(e) < f.Days()-1 {
				continue
			}
			u, err := f.Logs(dailyUntil(r, e, f.Days()))
			if err != nil {
				return nil, nil, err
			}
			next, err := f.Logs(dailyUntil(r, e.AddDate(0, 0, WeekDays), f.Days()))
			if err != nil {
				return nil, nil, err
			}
			for j := 0; j+1 < len(u); j++ {
				x = append(x, u[j]-u[j+1])
			}
			y = append(y, next[0]-u[0])
		}
	}
	return x, y, nil
}

// Forecast is the unpublished forecast: the median exp(m) − κ (times 7)
// and the public range around it without output noise.
func (d *LipschitzDesign) Forecast(params []float64, own *series.Dataset, pub *forecast.PublicInputs) ([]forecast.Quantiles, error) {
	f := d.ReleasedForecaster(params)
	out := make([]forecast.Quantiles, len(own.Regions))
	for i, r := range own.Regions {
		m, err := f.Median(dailyUntil(r, pub.Known, f.Days()))
		if err != nil {
			return nil, err
		}
		out[i] = publish.Range(m, d.Spread, 0, d.Kappa)
	}
	return out, nil
}

// Publisher is a design whose forecasts can be published with a
// person-level guarantee.
type Publisher interface {
	ReleasedForecaster(params []float64) *publish.Forecaster
}

// PublishOptions ask Run for the published forecasts too.
type PublishOptions struct {
	Epsilon float64 // per person per year (one case)
	Delta   float64
	Spread  float64 // the public spread s₀ (0: publish.DefaultSpread)
}

// published holds the replay's publication state.
type published struct {
	o   PublishOptions
	rng *rand.Rand
	acc publish.Accountant
}

func (rp *replay) newPublished() (*published, error) {
	po := rp.o.Publish
	if _, ok := rp.o.Design.(Publisher); !ok {
		return nil, fmt.Errorf("backtest: --publish-epsilon needs a publishable design: use --preset lipschitz")
	}
	p := &published{o: *po}
	if p.o.Spread == 0 {
		p.o.Spread = publish.DefaultSpread
	}
	if rp.o.Seed != nil {
		p.rng = fl.NewRand(*rp.o.Seed, streamPublish)
	} else {
		p.rng = privacy.NewSecureRand()
	}
	return p, nil
}

// streamPublish is the random stream of the output noise in research runs.
const streamPublish fl.Stream = 27

// publishAll publishes every area's forecast at origin t: the released
// model's median from the area's own counts, noised once, and the public
// range around it.
func (rp *replay) publishAll(p *published, global []float64, t time.Time) ([]forecast.Quantiles, error) {
	if global == nil { // before the first campaign: the initial model
		global = make([]float64, nn.NewMLP(rp.o.Design.Layers()...).NumParams())
		rp.o.Design.Init(global, nil)
	}
	f := rp.o.Design.(Publisher).ReleasedForecaster(global)
	mech, err := publish.Calibrate(f.Sensitivity(), p.o.Epsilon, p.o.Delta)
	if err != nil {
		return nil, err
	}
	p.acc.Add(t, mech)
	out := make([]forecast.Quantiles, len(rp.lhas))
	for i, own := range rp.lhas {
		m, err := f.Median(dailyUntil(own.Regions[0], t, f.Days()))
		if err != nil {
			return nil, err
		}
		mt, err := mech.Noise(m, p.rng)
		if err != nil {
			return nil, err
		}
		out[i] = publish.Range(mt, p.o.Spread, mech.Sigma(), f.Kappa)
	}
	return out, nil
}

// PublishedResult returns r with the published forecasts in place of the
// unpublished (nil when r has none), for scoring and hub files.
func (r *Result) PublishedResult() *Result {
	if r.Published == nil {
		return nil
	}
	q := *r
	q.Forecasts = r.Published
	return &q
}

// PublishedSummary is the --json "published" object.
type PublishedSummary struct {
	EpsilonPerPersonYear float64 `json:"epsilon_per_person_year"`
	Delta                float64 `json:"delta"`
	RelativeWIS          float64 `json:"relative_wis"`
	RelativeMAE          float64 `json:"relative_mae"`
	Coverage95           float64 `json:"coverage_95"`
	// BySize compares published and unpublished by the areas' average
	// daily cases over the scored weeks.
	BySize []SizeScores `json:"by_size"`
}

// SizeScores are the relative WIS of one size group.
type SizeScores struct {
	Group                  string  `json:"group"`
	Areas                  int     `json:"areas"`
	RelativeWIS            float64 `json:"relative_wis"`
	UnpublishedRelativeWIS float64 `json:"unpublished_relative_wis"`
}

// SizeGroups are the average-daily-case groups of PublishedSummary.BySize.
var SizeGroups = []struct {
	Name     string
	Min, Max float64
}{{"all", 0, math.Inf(1)}, {"at least 10 cases a day", 10, math.Inf(1)}, {"at least 100 cases a day", 100, math.Inf(1)},
	{"10 to 100 cases a day", 10, 100}, {"3 to 10 cases a day", 3, 10}, {"1 to 3 cases a day", 1, 3}, {"under 1 case a day", 0, 1}}

// SummarisePublished scores the published forecasts of r against cases.
func SummarisePublished(r *Result, cases *series.Dataset) (*PublishedSummary, error) {
	pr := r.PublishedResult()
	if pr == nil {
		return nil, nil
	}
	s, err := Score(pr, cases)
	if err != nil {
		return nil, err
	}
	out := &PublishedSummary{EpsilonPerPersonYear: r.PublishedEpsilon, Delta: r.PublishedDelta,
		RelativeWIS: s.All.RelativeWIS, RelativeMAE: s.All.RelativeMAE, Coverage95: s.All.Coverage95}
	avg := averageDaily(r, cases)
	for _, g := range SizeGroups {
		keep := make([]bool, len(avg))
		n := 0
		for i, a := range avg {
			if keep[i] = a >= g.Min && a < g.Max; keep[i] {
				n++
			}
		}
		if n == 0 {
			continue
		}
		pub, err := Score(subset(pr, keep), subsetCases(cases, keep))
		if err != nil {
			return nil, err
		}
		unp, err := Score(subset(r, keep), subsetCases(cases, keep))
		if err != nil {
			return nil, err
		}
		out.BySize = append(out.BySize, SizeScores{Group: g.Name, Areas: n, RelativeWIS: zeroNaN(pub.All.RelativeWIS), UnpublishedRelativeWIS: zeroNaN(unp.All.RelativeWIS)})
	}
	out.RelativeWIS, out.RelativeMAE, out.Coverage95 = zeroNaN(out.RelativeWIS), zeroNaN(out.RelativeMAE), zeroNaN(out.Coverage95)
	return out, nil
}

// averageDaily returns each area's average daily count over the scored
// weeks (origin+1 … origin+7 of every origin).
func averageDaily(r *Result, cases *series.Dataset) []float64 {
	out := make([]float64, len(cases.Regions))
	for i, reg := range cases.Regions {
		s, n := 0.0, 0
		for _, t := range r.Origins {
			if y := weekTotal(reg, t.AddDate(0, 0, 1)); !math.IsNaN(y) {
				s += y
				n += WeekDays
			}
		}
		if n > 0 {
			out[i] = s / float64(n)
		}
	}
	return out
}

func subset(r *Result, keep []bool) *Result {
	q := *r
	q.Areas = nil
	q.Forecasts = make([][]forecast.Quantiles, len(r.Forecasts))
	for i, a := range r.Areas {
		if keep[i] {
			q.Areas = append(q.Areas, a)
		}
	}
	for o, fs := range r.Forecasts {
		for i, f := range fs {
			if keep[i] {
				q.Forecasts[o] = append(q.Forecasts[o], f)
			}
		}
	}
	return &q
}

func subsetCases(d *series.Dataset, keep []bool) *series.Dataset {
	out := &series.Dataset{}
	for i, r := range d.Regions {
		if keep[i] {
			out.Regions = append(out.Regions, r)
		}
	}
	return out
}

// zeroNaN writes a score of nothing (NaN) as 0, as Summary.WriteJSON does.
func zeroNaN(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// WritePublishedHub writes the published forecasts into dir/published with
// the layout of WriteHub (one file per origin, every area), and
// dir/published/dp.json stating the guarantee.
func WritePublishedHub(dir, model string, r *Result) ([]string, error) {
	pr := r.PublishedResult()
	if pr == nil {
		return nil, nil
	}
	sub := filepath.Join(dir, "published")
	files, err := WriteHub(sub, model, pr)
	if err != nil {
		return files, err
	}
	mark := publish.Marking{DP: true, EpsilonPerPersonYear: r.PublishedEpsilon, Delta: r.PublishedDelta,
		Covers: publish.Covers}
	b, err := json.MarshalIndent(mark, "", "  ")
	if err != nil {
		return files, err
	}
	name := filepath.Join(sub, "dp.json")
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		return files, fmt.Errorf("backtest: --hub: %w", err)
	}
	return append(files, name), nil
}
