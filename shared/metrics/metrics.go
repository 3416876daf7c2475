package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// Result holds the accuracy of one set of predictions.
type Result struct {
	N                  int     `json:"n"`
	MSE                float64 `json:"mse"`
	MAE                float64 `json:"mae"`
	MAPE               float64 `json:"mape"`
	MdAPE              float64 `json:"mdape"`
	R2                 float64 `json:"r2"`
	ZeroTargetsDropped int     `json:"zero_targets_dropped"`
}

// Compute returns all measures for targets y and predictions yhat, which
// must have the same length (it panics otherwise: a programmer error).
func Compute(y, yhat []float64) Result {
	checkLen(y, yhat)
	r := Result{N: len(y)}
	if len(y) == 0 {
		nan := math.NaN()
		r.MSE, r.MAE, r.MAPE, r.MdAPE, r.R2 = nan, nan, nan, nan, nan
		return r
	}
	r.MSE = MSE(y, yhat)
	r.MAE = MAE(y, yhat)
	ape := APE(y, yhat)
	r.ZeroTargetsDropped = len(y) - len(ape)
	r.MAPE = mean(ape)
	r.MdAPE = Median(ape)
	r.R2 = R2(y, yhat)
	return r
}

func checkLen(y, yhat []float64) {
	if len(y) != len(yhat) {
		panic(fmt.Sprintf("metrics: %d targets but %d predictions", len(y), len(yhat)))
	}
}

// MSE is the mean squared error.
func MSE(y, yhat []float64) float64 {
	checkLen(y, yhat)
	var s float64
	for i := range y {
		d := y[i] - yhat[i]
		s += d * d
	}
	return s / float64(len(y))
}

// MAE is the mean absolute error.
func MAE(y, yhat []float64) float64 {
	checkLen(y, yhat)
	var s float64
	for i := range y {
		s += math.Abs(y[i] - yhat[i])
	}
	return s / float64(len(y))
}

// APE returns the absolute percentage errors 100·|y−ŷ|/|y| of the pairs
// whose target is not zero, in input order.
func APE(y, yhat []float64) []float64 {
	checkLen(y, yhat)
	out := make([]float64, 0, len(y))
	for i := range y {
		if y[i] != 0 {
			out = append(out, 100*math.Abs(y[i]-yhat[i])/math.Abs(y[i]))
		}
	}
	return out
}

// MAPE is the mean absolute percentage error in %, over non-zero targets;
// dropped is the number of zero targets left out.
func MAPE(y, yhat []float64) (mape float64, dropped int) {
	ape := APE(y, yhat)
	return mean(ape), len(y) - len(ape)
}

// R2 is the pooled coefficient of determination 1 − SS_res/SS_tot.
func R2(y, yhat []float64) float64 {
	checkLen(y, yhat)
	ybar := mean(y)
	var res, tot float64
	for i := range y {
		d := y[i] - yhat[i]
		res += d * d
		e := y[i] - ybar
		tot += e * e
	}
	if tot == 0 {
		return math.NaN()
	}
	return 1 - res/tot
}

// Median returns the median of x (NaN for an empty slice); x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Summary is the mean and sample standard deviation (divisor n−1) of one
// measure over repeated runs.
type Summary struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// Summarize returns the mean and sample standard deviation of x. NaN values
// are propagated (a run with an undefined measure makes the summary NaN).
func Summarize(x []float64) Summary {
	if len(x) == 0 {
		return Summary{math.NaN(), math.NaN()}
	}
	m := mean(x)
	if len(x) == 1 {
		return Summary{Mean: m}
	}
	var ss float64
	for _, v := range x {
		d := v - m
		ss += d * d
	}
	return Summary{Mean: m, SD: math.Sqrt(ss / float64(len(x)-1))}
}

// Stratum is a population class [Lo, Hi) of spec §7.
type Stratum struct {
	Name   string
	Lo, Hi float64
}

// PopulationStrata returns the paper's five population classes:
// [0,50k), [50k,100k), [100k,200k), [200k,500k), ≥500k.
func PopulationStrata() []Stratum {
	return []Stratum{
		{"[0,50k)", 0, 50e3},
		{"[50k,100k)", 50e3, 100e3},
		{"[100k,200k)", 100e3, 200e3},
		{"[200k,500k)", 200e3, 500e3},
		{">=500k", 500e3, math.Inf(1)},
	}
}

// StratumOf returns the index in PopulationStrata of a population, or −1
// for a negative or NaN population.
func StratumOf(population float64) int {
	for i, s := range PopulationStrata() {
		if population >= s.Lo && population < s.Hi {
			return i
		}
	}
	return -1
}

// num is a float64 whose JSON form is null when it is NaN or ±Inf (an
// undefined measure: JSON has no NaN) and a number otherwise.
type num float64

func (v num) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

func (v *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = num(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*v = num(f)
	return err
}

type summaryJSON struct {
	Mean num `json:"mean"`
	SD   num `json:"sd"`
}

// MarshalJSON writes undefined (NaN) values as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{num(s.Mean), num(s.SD)})
}

// UnmarshalJSON reads null as NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var v summaryJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Mean, s.SD = float64(v.Mean), float64(v.SD)
	return nil
}

type resultJSON struct {
	N                  int `json:"n"`
	MSE                num `json:"mse"`
	MAE                num `json:"mae"`
	MAPE               num `json:"mape"`
	MdAPE              num `json:"mdape"`
	R2                 num `json:"r2"`
	ZeroTargetsDropped int `json:"zero_targets_dropped"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{r.N, num(r.MSE), num(r.MAE), num(r.MAPE), num(r.MdAPE), num(r.R2), r.ZeroTargetsDropped})
}

// UnmarshalJSON reads null as NaN.
func (r *Result) UnmarshalJSON(b []byte) error {
	var v resultJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Result{v.N, float64(v.MSE), float64(v.MAE), float64(v.MAPE), float64(v.MdAPE), float64(v.R2), v.ZeroTargetsDropped}
	return nil
}
