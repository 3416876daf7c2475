package backtest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// Design is a forecasting design as the backtest replays it: the seam
// where a design plugs in. The backtest owns the schedule, the privacy
// (sampling, clipping, noise, the lifetime budget) and the scoring; the
// design owns what one LHA computes from what it knows.
//
// Every method that reads data gets one LHA's own areas (own) and the
// public inputs (pub), both cut by the backtest to what was known on the
// day it acts: own holds the reports up to and including that day, pub is
// PublicInputs.Until that day. A design never sees another LHA's data: the
// only data shared between LHAs are pub and the released global model.
//
// A design is used from several goroutines at once (one per LHA being
// trained or forecast): its methods must be safe for concurrent use.
type Design interface {
	// Recipe is the design's training recipe: the federated schedule
	// (T, m or q, E, S, learning rate, accountant) the backtest runs.
	// Only those fields are read; the network is Layers.
	Recipe() model.Design
	// Layers are the network's layer sizes, inputs first, 1 last.
	Layers() []int
	// Init writes the initial model of a campaign into dst. previous is
	// the last campaign's released model (nil before the first): a
	// design may start from it, which costs no privacy, or from a public
	// initial model.
	Init(dst, previous []float64)
	// Training returns the LHA's training set (x row-major n×Layers()[0],
	// y of length n) from what it knew at a campaign's start. n = 0 is
	// allowed: the LHA then sends a zero update.
	Training(own *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error)
	// Forecast returns, for each region of own in order, the quantiles at
	// forecast.Levels of the total reported cases over the 7 days after
	// the last known day (pub.Known). A forecast of all NaN means "no
	// forecast for this area"; the backtest then writes the no-change
	// forecast of the area's own last 7 days (all levels equal).
	Forecast(params []float64, own *series.Dataset, pub *forecast.PublicInputs) ([]forecast.Quantiles, error)
}

// WeekDays is the length of the forecast target: the total over the 7
// days after the origin.
const WeekDays = 7

// StudyDesign adapts one of today's designs (model.Default, model.Paper:
// the live study's recipe) to Design. It trains on the windows of the last
// TrainDays days, as a one-month study does, with the study's windows
// (H = the design's History, P = 7, centred 7-day averages), starts every
// campaign from the design's initial model (the public pretrained model,
// or the paper's random initialisation) and forecasts as a live LHA's page
// does (session.PointForecasts: the model's point forecast, quantiles from
// the LHA's own recent errors). The centred average 7 days after the last
// input day (origin − 3) is the mean of days origin+1 … origin+7, so its
// quantiles times 7 are the weekly total's. It reads no public inputs.
type StudyDesign struct {
	D         model.Design
	TrainDays int
	// Seed fixes the random initialisation of designs that have one.
	Seed uint64

	mlp *nn.MLP
	st  protocol.Study
}

// NewStudyDesign returns the adaptor of d training on the last 30 days.
func NewStudyDesign(d model.Design, seed uint64) *StudyDesign {
	layers := append(append([]int{d.History}, d.Hidden...), 1)
	sd := &StudyDesign{D: d, TrainDays: 30, Seed: seed, mlp: nn.NewMLP(layers...)}
	damping := d.Damping
	if damping == 0 {
		damping = 1
	}
	sd.st = protocol.Study{Layers: layers, Params: sd.mlp.NumParams(),
		Settings: protocol.Settings{Hidden: slices.Clone(d.Hidden), History: d.History, Horizon: WeekDays, Smoothing: "centered",
			Features: string(d.Features), Damping: damping}}
	return sd
}

// Recipe returns D.
func (s *StudyDesign) Recipe() model.Design { return s.D }

// Layers returns H, the hidden widths and 1.
func (s *StudyDesign) Layers() []int { return s.st.Layers }

// Init writes the design's initial model (previous is not used: a live
// one-month study starts afresh).
func (s *StudyDesign) Init(dst, _ []float64) {
	s.D.Features.Init(s.mlp, dst, fl.NewRand(s.Seed, fl.StreamInit))
}

// Training returns the windows whose inputs and targets lie in the last
// TrainDays known days, in the design's features.
func (s *StudyDesign) Training(own *series.Dataset, pub *forecast.PublicInputs) (x, y []float64, err error) {
	from := pub.Known.AddDate(0, 0, -s.TrainDays+1)
	var ok []*series.Region
	for _, r := range own.Regions {
		if len(r.Cases) > 0 && !r.Start.After(from.AddDate(0, 0, -3)) {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil, nil, nil
	}
	areas, err := series.MakeWindows(&series.Dataset{Regions: ok},
		series.WindowOptions{History: s.D.History, Horizon: WeekDays, Smoothing: series.Centered, From: from})
	if errors.Is(err, series.ErrTooShort) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	x, y = s.D.Features.Stack(areas)
	return x, y, nil
}

// Forecast forecasts each area as a live LHA's page does, the 7-day
// average's quantiles times 7.
func (s *StudyDesign) Forecast(params []float64, own *series.Dataset, pub *forecast.PublicInputs) ([]forecast.Quantiles, error) {
	out := make([]forecast.Quantiles, len(own.Regions))
	for i := range out {
		for j := range out[i] {
			out[i][j] = math.NaN()
		}
	}
	point, err := session.DesignPoint(s.st, s.mlp, params)
	if err != nil {
		return nil, err
	}
	fs, _, err := session.PointForecasts(s.st, own, point)
	if err != nil {
		return out, nil // no area long enough: the no-change fallback
	}
	want := pub.Known.AddDate(0, 0, WeekDays-3)
	for _, f := range fs {
		if !series.Date(f.Target).Equal(want) {
			continue
		}
		i := regionIndex(own, f.Area)
		if i < 0 {
			continue
		}
		for j, v := range f.Quantiles {
			out[i][j] = WeekDays * v
		}
	}
	return out, nil
}

func regionIndex(d *series.Dataset, name string) int {
	for i, r := range d.Regions {
		if r.Name == name {
			return i
		}
	}
	return -1
}

// Until returns own cut to the days up to and including day (regions
// resliced, not copied; a region that starts after day is left out).
func Until(own *series.Dataset, day time.Time) *series.Dataset {
	out := &series.Dataset{Regions: make([]*series.Region, 0, len(own.Regions))}
	for _, r := range own.Regions {
		n := r.Index(day) + 1
		if n <= 0 {
			continue
		}
		n = min(n, len(r.Cases))
		out.Regions = append(out.Regions, &series.Region{Name: r.Name, Start: r.Start, Cases: r.Cases[:n:n]})
	}
	return out
}

// registry holds the designs beyond today's (registerDesign).
var registry = map[string]func(seed uint64) (Design, error){}

// registerDesign makes a design available by name to DesignFor (from an
// init function of the file that adapts it).
func registerDesign(name string, f func(seed uint64) (Design, error)) { registry[name] = f }

// DefaultPreset is the design `fedcast backtest` runs without --preset:
// "weekly" once the weekly design is registered (weekly.go), otherwise
// "default", today's one-month design.
func DefaultPreset() string {
	if _, ok := registry["weekly"]; ok {
		return "weekly"
	}
	return "default"
}

// Presets lists the names DesignFor knows.
func Presets() []string {
	names := []string{"default", "paper"}
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DesignFor returns the design a preset name stands for: a registered
// design, or "default" and "paper" (model.Preset) run as a live one-month
// study runs them (StudyDesign). "" is DefaultPreset.
func DesignFor(name string, seed uint64) (Design, error) {
	if name == "" {
		name = DefaultPreset()
	}
	if f, ok := registry[name]; ok {
		return f(seed)
	}
	d, err := model.Preset(name)
	if err != nil || (name != "default" && name != "paper") {
		return nil, fmt.Errorf("backtest: --preset %q: use one of %s", name, strings.Join(Presets(), ", "))
	}
	return NewStudyDesign(d, seed), nil
}
