package privacy_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A schedule with half the noise in the last round as in the first,
// calibrated so that the whole study (q = 0.25, T = 10) is (1, 1e-5)-DP.
func ExampleSchedule_Calibrate() {
	s, err := privacy.ParseSchedule("linear:0.5")
	if err != nil {
		panic(err)
	}
	cs, err := s.Calibrate(privacy.AccountantRDP, 1, 1e-5, 0.25, 10)
	if err != nil {
		panic(err)
	}
	eps, _ := privacy.ScheduleEpsilon(privacy.AccountantRDP, 0.25, cs, 1e-5)
	fmt.Printf("c_1 = %.3f, c_10 = %.3f, ε = %.4f\n", cs[0], cs[9], eps)
	// Output:
	// c_1 = 5.484, c_10 = 2.742, ε = 1.0000
}
