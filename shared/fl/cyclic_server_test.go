package fl

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// The state survives a JSON round trip in the middle of a round: a study
// stopped after any turn, stored and reloaded, ends with the same model and
// accounts as one that ran through.
func TestCyclicServerResume(t *testing.T) {
	const n, rounds, dim = 3, 3, 5
	cfg := cyclicConfig(n, rounds).WithSchedule([]float64{4, 3, 2})
	eps, _ := CyclicEpsilon(cfg, 1e-5)
	trainedOf := func(g []float64, client int) []float64 {
		out := slices.Clone(g)
		for k := range out {
			out[k] += 0.1 * float64(client+1)
		}
		return out
	}
	run := func(stopAfter int) *CyclicServer {
		srv, err := NewCyclicServer(cfg, make([]float64, dim), eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		order, noise := NewRand(1, StreamSampling), NewRand(1, StreamNoise)
		for turn := 0; ; turn++ {
			if turn == stopAfter {
				b, err := json.Marshal(srv)
				if err != nil {
					t.Fatal(err)
				}
				var back CyclicServer
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatalf("reload after turn %d: %v", turn, err)
				}
				srv = &back
			}
			i, err := srv.Next(order)
			if errors.Is(err, ErrStudyComplete) {
				return srv
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := srv.Propose(trainedOf(srv.Global, i), noise)
			if err != nil {
				t.Fatal(err)
			}
			srv.Apply(p)
		}
	}
	want := run(-1)
	if !want.Done() || want.Round != rounds {
		t.Fatalf("study ended at round %d", want.Round)
	}
	for i := range n {
		if want.Accounts.Turns(i) != rounds || math.Abs(want.Accounts.Epsilon(i)-eps) > 1e-12 {
			t.Errorf("client %d: %d hand-offs, ε %v; want %d, %v", i, want.Accounts.Turns(i), want.Accounts.Epsilon(i), rounds, eps)
		}
	}
	for stop := 0; stop <= n*rounds; stop++ {
		got := run(stop)
		if !slices.Equal(got.Global, want.Global) {
			t.Errorf("stopped after turn %d: a different model", stop)
		}
	}
}

func TestCyclicServerRefuses(t *testing.T) {
	cfg := cyclicConfig(2, 2)
	eps, _ := CyclicEpsilon(cfg, 1e-5)
	if _, err := NewCyclicServer(cfg, make([]float64, 3), eps*0.99, 1e-5); !errors.Is(err, privacy.ErrBudgetExhausted) {
		t.Errorf("over budget: %v", err)
	}
	srv, err := NewCyclicServer(cfg, make([]float64, 3), eps, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Propose(make([]float64, 3), NewRand(1, StreamNoise)); !errors.Is(err, ErrConfig) {
		t.Errorf("Propose before Next: %v", err)
	}
	order := rand.New(rand.NewPCG(1, 2))
	if _, err := srv.Next(order); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Propose(make([]float64, 4), NewRand(1, StreamNoise)); !errors.Is(err, ErrUpdateLength) {
		t.Errorf("wrong length: %v", err)
	}
	p, _ := srv.Propose(make([]float64, 3), NewRand(1, StreamNoise))
	srv.Apply(p)
	b, _ := json.Marshal(srv)
	// An account that claims fewer hand-offs than the client made.
	tampered := strings.Replace(string(b), `"rounds":1`, `"rounds":0`, 1)
	var back CyclicServer
	if err := json.Unmarshal([]byte(tampered), &back); !errors.Is(err, ErrConfig) {
		t.Errorf("tampered account accepted: %v", err)
	}
	tampered = strings.Replace(string(b), `"order":[`, `"order":[0,`, 1)
	if err := json.Unmarshal([]byte(tampered), &back); !errors.Is(err, ErrConfig) {
		t.Errorf("order that is not a permutation accepted: %v", err)
	}
}
