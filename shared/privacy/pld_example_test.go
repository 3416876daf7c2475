package privacy_test

import (
	"fmt"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The paper's setting (q = 0.25, T = 75, δ = 1e-5) with the noise the RDP
// accountant needs for ε = 2: the PLD accountant certifies less, and
// calibrating with it needs less noise for the same guarantee.
func ExamplePLDEpsilon() {
	est, err := privacy.PLDEpsilon([]privacy.Event{{SampleRate: 0.25, NoiseMultiplier: 4.86303, Rounds: 75}}, 1e-5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ε ≤ %.3f (exact ε ≥ %.3f, worse direction: %s)\n", est.Epsilon, est.Lower, est.Direction)
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		c, err := privacy.NoiseMultiplierFor(kind, 2, 1e-5, 0.25, 75)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: c = %.2f for ε = 2\n", kind, c)
	}
	// Output:
	// ε ≤ 1.829 (exact ε ≥ 1.791, worse direction: remove)
	// rdp: c = 4.86 for ε = 2
	// pld: c = 4.51 for ε = 2
}
