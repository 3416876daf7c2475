package experiment

import (
	"math"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/series"
)

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
