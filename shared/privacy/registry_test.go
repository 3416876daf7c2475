package privacy_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

func TestLookupAccountant(t *testing.T) {
	for _, tc := range []struct {
		name string
		want privacy.AccountantKind
	}{{"", privacy.AccountantRDP}, {"rdp", privacy.AccountantRDP}, {"pld", privacy.AccountantPLD}} {
		a, err := privacy.LookupAccountant(privacy.AccountantKind(tc.name))
		if err != nil || a.Kind() != tc.want {
			t.Errorf("LookupAccountant(%q) = %v, %v; want %s", tc.name, a, err, tc.want)
		}
	}
	_, err := privacy.LookupAccountant("moments")
	if !errors.Is(err, privacy.ErrInvalidParameter) {
		t.Errorf("unknown accountant: %v, want ErrInvalidParameter", err)
	}
	for _, k := range privacy.AccountantKinds() {
		if !strings.Contains(err.Error(), `"`+string(k)+`"`) {
			t.Errorf("unknown accountant: %v, want it to list %q", err, k)
		}
	}
	if err := privacy.AccountantKind("").Check(); err == nil {
		t.Error(`Check of "" passed: the empty kind is not an accountant (only LookupAccountant defaults it)`)
	}
}

// The interface gives what the package functions give, for both accountants.
func TestAccountantsMatchPackageFunctions(t *testing.T) {
	events := []privacy.Event{{SampleRate: 0.1, NoiseMultiplier: 1.2, Rounds: 20}, {SampleRate: 0.1, NoiseMultiplier: 1.5, Rounds: 10}}
	for _, kind := range []privacy.AccountantKind{privacy.AccountantRDP, privacy.AccountantPLD} {
		a, _ := privacy.LookupAccountant(kind)
		got, err := a.Epsilon(events, 1e-5)
		want, err2 := privacy.EpsilonFor(kind, events, 1e-5)
		if err != nil || err2 != nil || got != want || !(got > 0) {
			t.Errorf("%s: Epsilon %v (%v), EpsilonFor %v (%v)", kind, got, err, want, err2)
		}
		c, err := a.NoiseMultiplier(2, 1e-5, 0.1, 30)
		c2, err2 := privacy.NoiseMultiplierFor(kind, 2, 1e-5, 0.1, 30)
		if err != nil || err2 != nil || c != c2 {
			t.Errorf("%s: NoiseMultiplier %v (%v), NoiseMultiplierFor %v (%v)", kind, c, err, c2, err2)
		}
		if eps, _ := a.Epsilon([]privacy.Event{{SampleRate: 0.1, NoiseMultiplier: c, Rounds: 30}}, 1e-5); !(eps <= 2) {
			t.Errorf("%s: the calibrated c=%v gives ε=%v > 2", kind, c, eps)
		}
	}
}

// EpsilonAfter reads an RDP study's ε from its running state (round by
// round, as the ledger recorded it) and composes the events otherwise.
func TestEpsilonAfter(t *testing.T) {
	const q, c, rounds, delta = 0.2, 1.1, 7, 1e-5
	running := privacy.NewRDP(nil)
	for range rounds {
		running.Compose(q, c, 1)
	}
	want, _ := running.Epsilon(delta)
	events := privacy.RoundEvents(q, c, nil, rounds)
	got, err := privacy.EpsilonAfter(privacy.RDPAccountant{}, events, running, delta)
	if err != nil || got != want {
		t.Errorf("RDP with running state: %v (%v), want the state's %v", got, err, want)
	}
	fresh, _ := privacy.RDPAccountant{}.Epsilon(events, delta)
	if got, _ := privacy.EpsilonAfter(privacy.RDPAccountant{}, events, nil, delta); got != fresh {
		t.Errorf("RDP without state: %v, want %v", got, fresh)
	}
	pld, _ := privacy.PLDAccountant{}.Epsilon(events, delta)
	if got, _ := privacy.EpsilonAfter(privacy.PLDAccountant{}, events, running, delta); got != pld || math.Abs(pld-want) > 0.5*want {
		t.Errorf("PLD: %v, want its own composition %v (RDP %v)", got, pld, want)
	}
}

func TestMultiplierAtAndRoundEvents(t *testing.T) {
	sched := []float64{2, 2, 1.5, 1}
	for _, tc := range []struct {
		round int
		want  float64
	}{{0, 1}, {1, 2}, {3, 1.5}, {4, 1}, {5, 1}} {
		if got := privacy.MultiplierAt(1, sched, tc.round); got != tc.want {
			t.Errorf("MultiplierAt(round %d) = %v, want %v", tc.round, got, tc.want)
		}
	}
	if got := privacy.MultiplierAt(3, nil, 2); got != 3 {
		t.Errorf("no schedule: %v, want 3", got)
	}
	evs := privacy.RoundEvents(0.5, 1, sched, 3)
	if len(evs) != 2 || evs[0].Rounds != 2 || evs[1].NoiseMultiplier != 1.5 || evs[1].Rounds != 1 {
		t.Errorf("RoundEvents = %v", evs)
	}
	if evs := privacy.RoundEvents(0.5, 1, nil, 9); len(evs) != 1 || evs[0].Rounds != 9 {
		t.Errorf("constant RoundEvents = %v", evs)
	}
}
