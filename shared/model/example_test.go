package model_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/model"
)

// A window of smoothed counts becomes changes of ln(1+count) against its
// last day; the network's output 0 is the no-change forecast.
func ExampleFeatures() {
	x := []float64{90, 95, 99, 104, 110}
	in := make([]float64, len(x))
	model.LogChange.Input(in, x)
	fmt.Printf("inputs: %.3f\n", in)
	fmt.Printf("target for y=121: %.3f\n", model.LogChange.Target(x, 121))
	fmt.Printf("forecast for output 0: %.1f\n", model.LogChange.Forecast(x, 0))
	fmt.Printf("forecast for output 0.1: %.1f\n", model.LogChange.Forecast(x, 0.1))
	// Output:
	// inputs: [-0.199 -0.145 -0.104 -0.056 0.000]
	// target for y=121: 0.094
	// forecast for output 0: 110.0
	// forecast for output 0.1: 121.7
}
