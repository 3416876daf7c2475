package metrics_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/metrics"
)

func ExampleCompute() {
	y := []float64{0, 10, 20, 40}
	yhat := []float64{2, 12, 18, 40}
	r := metrics.Compute(y, yhat)
	fmt.Printf("MAE %.2f  MAPE %.1f%% (zero targets dropped: %d)  R² %.3f\n", r.MAE, r.MAPE, r.ZeroTargetsDropped, r.R2)
	// Output:
	// MAE 1.50  MAPE 10.0% (zero targets dropped: 1)  R² 0.986
}
