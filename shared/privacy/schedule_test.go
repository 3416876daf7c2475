package privacy

import (
	"errors"
	"math"
	"testing"
)

func TestParseSchedule(t *testing.T) {
	cases := []struct {
		spec  string
		rule  string
		param []float64
		err   bool
	}{
		{spec: "", rule: RuleConstant},
		{spec: " constant ", rule: RuleConstant},
		{spec: "linear:0.5", rule: RuleLinear, param: []float64{0.5}},
		{spec: "geometric:2", rule: RuleGeometric, param: []float64{2}},
		{spec: "step:5, 0.8", rule: RuleStep, param: []float64{5, 0.8}},
		{spec: "3,2.5,2", rule: RuleList, param: []float64{3, 2.5, 2}},
		{spec: "7", rule: RuleList, param: []float64{7}},
		{spec: "linear:0", err: true},
		{spec: "linear:-1", err: true},
		{spec: "linear:1e9", err: true},
		{spec: "linear:NaN", err: true},
		{spec: "linear:1,2", err: true},
		{spec: "step:0,0.5", err: true},
		{spec: "step:2.5,0.5", err: true},
		{spec: "step:3", err: true},
		{spec: "constant:1", err: true},
		{spec: "cosine:1", err: true},
		{spec: "list:1,2", err: true},
		{spec: "1,,2", err: true},
		{spec: "1,0,2", err: true},
		{spec: "1,Inf", err: true},
		{spec: "1,2e7", err: true},
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if tc.err {
			if !errors.Is(err, ErrSchedule) {
				t.Errorf("ParseSchedule(%q) = %+v, %v; want an error wrapping ErrSchedule", tc.spec, s, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", tc.spec, err)
			continue
		}
		if s.Rule != tc.rule || len(s.Params) != len(tc.param) {
			t.Errorf("ParseSchedule(%q) = %+v, want rule %s params %v", tc.spec, s, tc.rule, tc.param)
			continue
		}
		for i := range tc.param {
			if s.Params[i] != tc.param[i] {
				t.Errorf("ParseSchedule(%q) params %v, want %v", tc.spec, s.Params, tc.param)
			}
		}
	}
}

func TestScheduleShape(t *testing.T) {
	cases := []struct {
		spec   string
		rounds int
		want   []float64
		err    bool
	}{
		{spec: "constant", rounds: 3, want: []float64{1, 1, 1}},
		{spec: "linear:0.5", rounds: 3, want: []float64{1, 0.75, 0.5}},
		{spec: "linear:0.5", rounds: 1, want: []float64{1}},
		{spec: "geometric:4", rounds: 3, want: []float64{1, 2, 4}},
		{spec: "step:2,0.5", rounds: 4, want: []float64{1, 1, 0.5, 0.5}},
		{spec: "step:4,0.5", rounds: 4, err: true},
		{spec: "3,2,1", rounds: 3, want: []float64{3, 2, 1}},
		{spec: "3,2,1", rounds: 4, err: true},
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Shape(tc.rounds)
		if tc.err {
			if !errors.Is(err, ErrSchedule) {
				t.Errorf("%s over %d rounds: got %v, %v; want ErrSchedule", tc.spec, tc.rounds, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s over %d rounds: %v, %v; want %v", tc.spec, tc.rounds, got, err, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Errorf("%s over %d rounds: %v, want %v", tc.spec, tc.rounds, got, tc.want)
				break
			}
		}
	}
}

// TestScheduleCalibration: a calibrated schedule's total ε meets its
// target, scaling every multiplier down by 1e-6 misses it, and the total is
// the composition of the rounds one by one (the RDP of each round added at
// every order), not a sum of per-round ε.
func TestScheduleCalibration(t *testing.T) {
	const delta = 1e-5
	cases := []struct {
		spec   string
		kind   AccountantKind
		eps, q float64
		rounds int
		miss   float64 // relative scaling down that must miss the target
	}{
		{"constant", AccountantRDP, 1, 0.25, 75, 1e-6},
		{"linear:0.5", AccountantRDP, 1, 0.25, 75, 1e-6},
		{"linear:2", AccountantRDP, 2, 1, 10, 1e-6},
		{"step:5,0.7", AccountantRDP, 1, 1, 10, 1e-6},
		{"geometric:0.25", AccountantRDP, 2, 0.25, 30, 1e-6},
		{"step:5,0.7", AccountantPLD, 1, 1, 10, 1e-6},
		{"linear:0.5", AccountantPLD, 2, 0.25, 12, 1e-6},
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := s.Calibrate(tc.kind, tc.eps, delta, tc.q, tc.rounds)
		if err != nil {
			t.Errorf("%s %s ε=%v: %v", tc.spec, tc.kind, tc.eps, err)
			continue
		}
		if len(cs) != tc.rounds {
			t.Fatalf("%s: %d multipliers for %d rounds", tc.spec, len(cs), tc.rounds)
		}
		shape, _ := s.Shape(tc.rounds)
		for i := range cs { // the rule's shape is kept
			if r := cs[i] / cs[0]; math.Abs(r-shape[i]/shape[0]) > 1e-12 {
				t.Errorf("%s: round %d at %v × round 1, want %v", tc.spec, i+1, r, shape[i]/shape[0])
			}
		}
		eps, err := ScheduleEpsilon(tc.kind, tc.q, cs, delta)
		if err != nil || !(eps <= tc.eps) {
			t.Errorf("%s %s: ε = %v, %v; want ≤ %v", tc.spec, tc.kind, eps, err, tc.eps)
		}
		if eps < tc.eps*(1-1e-3) {
			t.Errorf("%s %s: ε = %v wastes budget (target %v)", tc.spec, tc.kind, eps, tc.eps)
		}
		down := make([]float64, len(cs))
		for i, c := range cs {
			down[i] = c * (1 - tc.miss)
		}
		if e, _ := ScheduleEpsilon(tc.kind, tc.q, down, delta); !(e > tc.eps) {
			t.Errorf("%s %s: scaled by 1−%g the schedule still meets the target (ε = %v ≤ %v): not the smallest scale",
				tc.spec, tc.kind, tc.miss, e, tc.eps)
		}
		if tc.kind != AccountantRDP {
			continue
		}
		// The same ε from composing round by round.
		a := NewRDP(nil)
		var split float64
		for _, c := range cs {
			a.Compose(tc.q, c, 1)
			e, _ := Epsilon(tc.q, c, 1, delta)
			split += e
		}
		byRound, _ := a.Epsilon(delta)
		if math.Abs(byRound-eps) > 1e-9*eps {
			t.Errorf("%s: ε = %v, but composing the %d rounds one by one gives %v", tc.spec, eps, tc.rounds, byRound)
		}
		if tc.rounds > 1 && !(split > 1.5*eps) {
			t.Errorf("%s: the sum of per-round ε (%v) should be far above the composed ε %v", tc.spec, split, eps)
		}
	}
}

func TestScheduleConstantIsNoiseMultiplier(t *testing.T) {
	s, _ := ParseSchedule("")
	cs, err := s.Calibrate(AccountantRDP, 1, 1e-5, 0.25, 75)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NoiseMultiplier(1, 1e-5, 0.25, 75)
	for i, v := range cs {
		if v != c {
			t.Fatalf("round %d: c = %v, NoiseMultiplier gives %v", i+1, v, c)
		}
	}
}

func TestScheduleList(t *testing.T) {
	s, err := ParseSchedule("9,9,8,8,7")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{9, 9, 8, 8, 7}
	eps, _ := ScheduleEpsilon(AccountantRDP, 0.25, want, 1e-5)
	cs, err := s.Calibrate(AccountantRDP, eps*1.001, 1e-5, 0.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if cs[i] != want[i] {
			t.Fatalf("a list is not rescaled: got %v, want %v", cs, want)
		}
	}
	if _, err := s.Calibrate(AccountantRDP, eps*0.999, 1e-5, 0.25, 5); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("a list above the target: %v, want ErrBudgetExhausted", err)
	}
	if _, err := s.Calibrate(AccountantRDP, 1, 1e-5, 0.25, 6); !errors.Is(err, ErrSchedule) {
		t.Errorf("a list of the wrong length: %v, want ErrSchedule", err)
	}
	cs, err = s.Calibrate(AccountantRDP, math.Inf(1), 1e-5, 0.25, 5)
	if err != nil || len(cs) != 5 || cs[0] != 0 {
		t.Errorf("non-DP: %v, %v; want five zeros", cs, err)
	}
}

func TestScheduleEvents(t *testing.T) {
	got := ScheduleEvents(0.5, []float64{2, 2, 3, 2, 2, 2})
	want := []Event{{0.5, 2, 2}, {0.5, 3, 1}, {0.5, 2, 3}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"", "constant", "linear:0.5", "step:3,2", "geometric:0.1", "1,2,3", "step:1e3,0.5", "linear:", ":", ",", "1e-400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSchedule(spec)
		if err != nil {
			if !errors.Is(err, ErrSchedule) {
				t.Fatalf("ParseSchedule(%q): error %v does not wrap ErrSchedule", spec, err)
			}
			return
		}
		back, err := ParseSchedule(s.String())
		if err != nil {
			t.Fatalf("ParseSchedule(%q) = %+v, whose String %q does not parse: %v", spec, s, s.String(), err)
		}
		if back.Rule != s.Rule || len(back.Params) != len(s.Params) {
			t.Fatalf("round trip %q → %q: %+v vs %+v", spec, s.String(), s, back)
		}
		for i := range s.Params {
			if back.Params[i] != s.Params[i] {
				t.Fatalf("round trip %q → %q: %+v vs %+v", spec, s.String(), s, back)
			}
		}
		shape, err := s.Shape(7)
		if err != nil {
			return
		}
		for i, v := range shape {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("%q: shape[%d] = %v", spec, i, v)
			}
		}
	})
}

func BenchmarkScheduleCalibrate(b *testing.B) {
	for _, bc := range []struct {
		name, spec string
		kind       AccountantKind
		q          float64
		rounds     int
	}{
		{"rdp-linear-q0.25-T75", "linear:0.5", AccountantRDP, 0.25, 75},
		{"rdp-step-q1-T10", "step:5,0.7", AccountantRDP, 1, 10},
		{"pld-step-q0.25-T75", "step:40,0.8", AccountantPLD, 0.25, 75},
	} {
		s, err := ParseSchedule(bc.spec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Calibrate(bc.kind, 1, 1e-5, bc.q, bc.rounds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
