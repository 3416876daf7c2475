package session

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// DefaultMaxWindows is the number of training windows a browser uses per
// round unless the LHA chooses otherwise: a full-batch training step over
// it takes about 35 ms in Chromium (35 µs per window), so the page can
// yield between steps well within 200 ms even on a busy machine, and it is
// far more than the 12–15 windows per area of the paper's one-month
// studies.
const DefaultMaxWindows = 1000

// TrainingSet is an LHA's training windows for a study (all areas of its
// file, each cut to the study's from/to and split by target date, the
// earliest train_fraction for training), prepared so that a large file
// never needs all windows in memory at once.
//
// When the study gives more windows than the cap, each round trains on a
// fresh uniform sample of cap of them (without replacement). That is free
// under client-level differential privacy: the guarantee bounds the
// whole clipped update of an LHA, whatever data and however many windows
// it was computed from.
type TrainingSet struct {
	opt      series.WindowOptions
	features model.Features // the study's feature map, applied to every window
	fraction float64
	history  int
	outputs  int // targets a window (a weekly quantile head's; 0: 1)
	regions  []*series.Region
	counts   []int // training windows per region
	total    int
	cap      int
	yield    func()
	rng      *rand.Rand
	x, y     []float64 // all windows, stacked, when total ≤ cap
	// allX, allY hold every window when they are prepared in memory
	// (PrepareWeekly) and more than cap: each round samples from them.
	allX, allY []float64
}

// PrepareTraining counts the training windows of data for study st,
// region by region, calling yield (when not nil) about every 30 ms so a
// browser can paint. maxWindows ≤ 0 means no cap.
func PrepareTraining(st protocol.Study, data *series.Dataset, maxWindows int, yield func()) (*TrainingSet, error) {
	opt, err := WindowOptions(st)
	if err != nil {
		return nil, err
	}
	features, err := model.Parse(st.Features)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	t := &TrainingSet{opt: opt, features: features, fraction: st.TrainFraction, history: opt.History, regions: data.Regions,
		counts: make([]int, len(data.Regions)), cap: maxWindows, yield: yield}
	if t.history == 0 {
		t.history = series.DefaultHistory
	}
	var seed [32]byte
	crand.Read(seed[:])
	t.rng = rand.New(rand.NewChaCha8(seed))
	last := time.Now()
	for i, r := range data.Regions {
		train, err := t.regionWindows(r)
		if err != nil {
			return nil, err
		}
		t.counts[i] = len(train)
		t.total += len(train)
		last = t.maybeYield(last)
	}
	if t.cap <= 0 || t.total <= t.cap {
		t.x, t.y, err = t.sample(t.total)
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Total is the number of training windows the study gives in the file.
func (t *TrainingSet) Total() int { return t.total }

// PerRound is the number of windows trained on in each round: Total, or
// the cap when Total is larger.
func (t *TrainingSet) PerRound() int {
	if t.cap > 0 && t.total > t.cap {
		return t.cap
	}
	return t.total
}

// Capped reports whether each round uses a sample of the windows.
func (t *TrainingSet) Capped() bool { return t.PerRound() < t.total }

// Round returns the windows of one round: all of them, or a fresh sample
// of PerRound when capped (x: n×H row-major, y: n).
func (t *TrainingSet) Round() (x, y []float64, err error) {
	if t.x != nil || t.total == 0 {
		return t.x, t.y, nil
	}
	if t.allX != nil {
		x, y = t.sampleMemory()
		return x, y, nil
	}
	return t.sample(t.PerRound())
}

// sample draws k of the total windows uniformly without replacement
// (sequential selection: each window is kept with probability
// needed/remaining), in region and date order.
func (t *TrainingSet) sample(k int) (x, y []float64, err error) {
	H := t.history
	x = make([]float64, 0, k*H)
	y = make([]float64, 0, k)
	need, left := k, t.total
	last := time.Now()
	for i, r := range t.regions {
		c := t.counts[i]
		if c == 0 || need == 0 {
			left -= c
			continue
		}
		var pick []int
		for j := range c {
			if need > 0 && (need == left || t.rng.IntN(left) < need) {
				pick = append(pick, j)
				need--
			}
			left--
		}
		if len(pick) == 0 {
			continue
		}
		train, err := t.regionWindows(r)
		if err != nil {
			return nil, nil, err
		}
		for _, j := range pick {
			x = append(x, train[j].X...)
			y = append(y, train[j].Y)
		}
		last = t.maybeYield(last)
	}
	// In the network's terms (the study's features), as TrainingData.
	t.features.Transform(x, y)
	return x, y, nil
}

// regionWindows returns the training windows of one region.
func (t *TrainingSet) regionWindows(r *series.Region) ([]series.Window, error) {
	areas, err := series.MakeWindows(&series.Dataset{Regions: []*series.Region{r}}, t.opt)
	if err != nil {
		return nil, err
	}
	train, _ := series.SplitAreas(areas, series.Temporal, t.fraction, nil)
	return train[0].Windows, nil
}

func (t *TrainingSet) maybeYield(last time.Time) time.Time {
	if t.yield == nil || time.Since(last) < 30*time.Millisecond {
		return last
	}
	t.yield()
	return time.Now()
}

// Unusable reports whether err, from preparing an LHA's training windows
// (PrepareTraining, PrepareWeekly, TrainingData, WeeklyTrainingData),
// comes from what its file holds: too few days, days the study needs
// missing, an area the public inputs do not list, no window at all. Such
// an LHA still takes part, present only (Run), so that being ready never
// depends on the file's content. Errors of the study itself (ErrBadStudy,
// a bad window option), of the public inputs file, or of the context are
// not: they stop the LHA whatever its data.
func Unusable(err error) bool {
	if err == nil {
		return false
	}
	for _, not := range []error{ErrBadStudy, series.ErrOption, ErrNoPublic, protocol.ErrPublicInput, forecast.ErrPublicFile,
		context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, not) {
			return false
		}
	}
	return true
}

// WindowOptions are the study's windowing settings: H, P, the smoothing
// and the from/to dates (an unknown smoothing or a bad date is ErrBadStudy).
func WindowOptions(st protocol.Study) (series.WindowOptions, error) {
	opt, err := st.WindowOptions()
	if err != nil {
		return opt, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	return opt, nil
}

// StudyPeriod is the study's from and to dates (zero when open-ended);
// a date that is not YYYY-MM-DD is ErrBadStudy.
func StudyPeriod(st protocol.Study) (from, to time.Time, err error) {
	for _, d := range []struct {
		s   string
		dst *time.Time
	}{{st.From, &from}, {st.To, &to}} {
		if d.s != "" {
			if *d.dst, err = time.Parse(time.DateOnly, d.s); err != nil {
				return from, to, fmt.Errorf("%w: date %q", ErrBadStudy, d.s)
			}
		}
	}
	return from, to, nil
}

// EstimateRound measures how long one round of local training takes on
// this computer: it times two training steps on up to 256 of the round's
// windows and scales that to PerRound windows and the study's E steps.
// The estimate covers training only (preparing a capped sample and the
// upload add a little).
func EstimateRound(st protocol.Study, t *TrainingSet) (time.Duration, error) {
	x, y, err := t.Round()
	if err != nil {
		return 0, err
	}
	n := min(len(y), 256)
	if n == 0 {
		return 0, ErrNoData
	}
	if len(st.Layers) < 2 {
		return 0, fmt.Errorf("%w: layers %v", ErrBadStudy, st.Layers)
	}
	mlp := nn.NewMLP(st.Layers...)
	w := make([]float64, mlp.NumParams())
	mlp.Init(w, rand.New(rand.NewPCG(1, 2)))
	cfg := fl.Config{LocalEpochs: 2, LearningRate: st.LearningRate, ClipNorm: st.ClipNorm, DP: st.ClipNorm > 0}
	d := make([]float64, len(w))
	tr := nn.NewTrainer(mlp)
	start := time.Now()
	fl.LocalUpdateProgress(tr, w, x[:n*t.history], y[:n], cfg, d, nil)
	perWindowStep := time.Since(start) / time.Duration(2*n)
	return perWindowStep * time.Duration(t.PerRound()) * time.Duration(max(1, st.LocalEpochs)), nil
}
