package protocol

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
)

// topUpStudy is a continuing study of 3 campaigns of 4 rounds at ε = 2.
func topUpStudy(t *testing.T) Study {
	t.Helper()
	const q, delta = 0.5, 1e-5
	c, err := privacy.NoiseMultiplier(2, delta, q, 12)
	if err != nil {
		t.Fatal(err)
	}
	return Study{Protocol: Version,
		Clients: 4, SampleRate: q, NoiseMultiplier: c,
		Layers: []int{7, 1}, Params: 8,
		Settings: Settings{Name: "topup", Epsilon: 2, Delta: delta, Rounds: 12, Campaigns: 3, Every: Duration(3600000 * time.Millisecond),
			ExpectedClients: 2, ClipNorm: 1, LocalEpochs: 1, LearningRate: 0.01,
			History: 7, Horizon: 7}}
}

func TestTopUpRaisesBudgetAndComposesToIt(t *testing.T) {
	st := topUpStudy(t)
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tu, err := st.NewTopUp(3, 2, at)
	if err != nil {
		t.Fatal(err)
	}
	up, err := st.Apply(tu)
	if err != nil {
		t.Fatal(err)
	}
	if up.Epsilon != 3 || up.Rounds != 20 || up.CampaignCount() != 5 || up.CampaignRounds() != 4 || len(up.NoiseMultipliers) != 20 {
		t.Fatalf("after the top-up: ε=%v, %d rounds, %d campaigns of %d, schedule of %d", up.Epsilon, up.Rounds, up.CampaignCount(), up.CampaignRounds(), len(up.NoiseMultipliers))
	}
	for r := 1; r <= 12; r++ {
		if up.NoiseMultipliers[r-1] != st.NoiseMultiplier {
			t.Fatalf("planned round %d now has c=%v, was %v", r, up.NoiseMultipliers[r-1], st.NoiseMultiplier)
		}
	}
	eps, err := privacy.FilterEpsilon(up.PlannedEvents(), up.Delta, tu.Order)
	if err != nil {
		t.Fatal(err)
	}
	if eps > 3 || eps < 3*(1-1e-4) {
		t.Fatalf("all 20 rounds compose to ε=%v under the filter, want 3", eps)
	}
	// The next top-up keeps the filter's order, fixed before the first.
	tu2, err := up.NewTopUp(4, 1, at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if tu2.Order != tu.Order || tu2.Number != 2 || tu2.FromEpsilon != 3 {
		t.Fatalf("second top-up: %+v", tu2)
	}
	// An LHA that agreed to the study as created accepts both, in one
	// welcome, after a JSON round trip.
	up2, err := up.Apply(tu2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(up2)
	var wire Study
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	got, err := CheckTopUps(st, wire)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID() != wire.ID() {
		t.Fatalf("the LHA's study after the top-ups differs from the coordinator's")
	}
}

func TestTopUpRefusals(t *testing.T) {
	st := topUpStudy(t)
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tu, err := st.NewTopUp(3, 2, at)
	if err != nil {
		t.Fatal(err)
	}
	pld := st
	pld.Accountant = privacy.AccountantPLD
	if _, err := pld.NewTopUp(3, 1, at); !errors.Is(err, ErrTopUp) {
		t.Fatalf("top-up of a PLD study: %v", err)
	}
	two := st
	two.Helper = &Helper{}
	if _, err := two.NewTopUp(3, 1, at); !errors.Is(err, ErrTopUp) || !strings.Contains(err.Error(), "helper") {
		t.Fatalf("top-up of a study with a helper: %v", err)
	}
	if _, err := st.NewTopUp(2, 1, at); !errors.Is(err, ErrTopUp) {
		t.Fatalf("top-up to the same budget: %v", err)
	}
	if _, err := st.NewTopUp(3, 0, at); !errors.Is(err, ErrTopUp) {
		t.Fatalf("top-up of no campaigns: %v", err)
	}
	for name, mutate := range map[string]func(*TopUp){
		"less noise than calibrated": func(t *TopUp) { t.NoiseMultiplier *= 0.9 },
		"another study":              func(t *TopUp) { t.Previous = "00" },
		"another order":              func(t *TopUp) { t.Order *= 2 },
		"rounds not whole campaigns": func(t *TopUp) { t.Rounds++ },
		"from another budget":        func(t *TopUp) { t.FromEpsilon = 1 },
		"out of order":               func(t *TopUp) { t.Number = 2 },
		"infinite budget":            func(t *TopUp) { t.Epsilon = math.Inf(1) },
	} {
		bad := tu
		mutate(&bad)
		if _, err := st.Apply(bad); !errors.Is(err, ErrTopUp) {
			t.Errorf("%s: Apply gave %v, want ErrTopUp", name, err)
		}
	}
	// A coordinator that rewrites an announced top-up is caught.
	up, _ := st.Apply(tu)
	rewritten, _ := st.Apply(tu)
	rewritten.TopUps[0].At = at.Add(time.Minute)
	if _, err := CheckTopUps(up, rewritten); !errors.Is(err, ErrTopUp) {
		t.Fatalf("rewritten top-up: %v", err)
	}
	if _, err := CheckTopUps(up, st); !errors.Is(err, ErrTopUp) {
		t.Fatalf("a top-up withdrawn: %v", err)
	}
}
