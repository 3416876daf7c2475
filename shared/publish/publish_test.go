package publish

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/nn"
)

// projected returns a forecaster with a random network scaled far above
// norm 1 and then projected, as a released model is.
func projected(rng *rand.Rand, kappa float64, weeks int, damping float64, hidden ...int) *Forecaster {
	sizes := append(append([]int{weeks - 1}, hidden...), 1)
	net := nn.NewMLP(sizes...)
	p := make([]float64, net.NumParams())
	net.Init(p, rng)
	for i := range p {
		p[i] *= 1 + 20*rng.Float64()
	}
	net.ProjectSpectral(p)
	return &Forecaster{Kappa: kappa, Weeks: weeks, Damping: damping, Net: net, Params: p}
}

// history draws a daily series of one of several adversarial shapes.
func history(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	shape := rng.IntN(6)
	level := math.Pow(10, 4*rng.Float64()-1)
	for i := range x {
		switch shape {
		case 0: // zeros: the floor is all that bounds the change
		case 1: // ones and zeros
			x[i] = float64(rng.IntN(2))
		case 2: // steady level with Poisson-like noise
			x[i] = math.Max(0, math.Round(level+math.Sqrt(level)*rng.NormFloat64()))
		case 3: // a wave
			x[i] = math.Round(level * math.Exp(float64(i-n/2)*0.2*rng.NormFloat64()))
		case 4: // one huge spike, the rest zero
			if i == rng.IntN(n) {
				x[i] = 1e6
			}
		default: // negative corrections and spikes
			x[i] = math.Round(level * (rng.Float64()*3 - 1))
		}
	}
	return x
}

// TestSensitivityBruteForce changes every day of the window by ±1 case in
// many random and adversarial histories and checks that the median never
// moves more than the bound for that day's week.
func TestSensitivityBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	worst := 0.0
	for trial := range 400 {
		kappa := []float64{0.5, 1, DefaultKappa, 50}[trial%4]
		weeks := 2 + trial%3
		f := projected(rng, kappa, weeks, 0.2+0.8*rng.Float64(), 8)
		sens := f.Sensitivity()
		x := history(rng, f.Days()+rng.IntN(5))
		m0, err := f.Median(x)
		if err != nil {
			t.Fatal(err)
		}
		y := append([]float64(nil), x...)
		for back := range f.Days() {
			i := len(x) - 1 - back
			for _, d := range []float64{1, -1} {
				y[i] = x[i] + d
				m1, err := f.Median(y)
				if err != nil {
					t.Fatal(err)
				}
				diff := math.Abs(m1 - m0)
				bound := sens[back/WeekDays]
				if diff > bound {
					t.Fatalf("trial %d: κ %v, day %d back, %+v case: median moved %v > bound %v", trial, kappa, back, d, diff, bound)
				}
				worst = max(worst, diff/bound)
			}
			y[i] = x[i]
		}
	}
	if worst < 0.5 {
		t.Errorf("largest change only %.2f of the bound: the test never came close (histories too tame)", worst)
	}
	t.Logf("400 histories, every day ±1: largest change %.3f of the bound", worst)
}

// TestSensitivityOfProjectedLayers checks the bound for the actual layers
// after projection: the exact norms are ≤ 1, so the bound is at most the
// one for L = 1, and a direction exists where the change nearly reaches it.
func TestSensitivityOfProjectedLayers(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	f := projected(rng, DefaultKappa, 3, 1, 16, 8)
	for l, s := range f.Net.SpectralNorms(f.Params) {
		if s > 1 {
			t.Fatalf("layer %d: spectral norm %v > 1 after projection", l, s)
		}
	}
	c := math.Log1p(1 / (WeekDays * float64(DefaultKappa)))
	sens := f.Sensitivity()
	want := []float64{c * (1 + f.Damping), math.Sqrt2 * c * f.Damping, c * f.Damping}
	for w := range want {
		if math.Abs(sens[w]-want[w]) > 1e-15 {
			t.Errorf("Δ_%d = %v, want %v: the public bound of a projected network", w, sens[w], want[w])
		}
	}
	// An unprojected network gets its own, larger, bound.
	p := append([]float64(nil), f.Params...)
	for i := range p {
		p[i] *= 3
	}
	g := *f
	g.Params = p
	if s := g.Sensitivity(); !(s[2] > sens[2]) {
		t.Errorf("a network with norms > 1 kept the bound %v", s)
	}
}

func TestCalibrateMeetsBudget(t *testing.T) {
	for _, eps := range []float64{0.5, 1, 2} {
		m, err := Calibrate([]float64{0.02, 0.015, 0.01}, eps, DefaultDelta)
		if err != nil {
			t.Fatal(err)
		}
		got := EpsilonOfRho(m.CaseRho(), DefaultDelta)
		if got > eps || got < 0.95*eps {
			t.Errorf("ε %v: one case costs %v, want just below", eps, got)
		}
	}
	if _, err := Calibrate([]float64{0.01}, 0, DefaultDelta); err == nil {
		t.Error("ε = 0 accepted")
	}
	if _, err := Calibrate([]float64{0.01}, 1, 2); err == nil {
		t.Error("δ = 2 accepted")
	}
}

// TestAccountantComposition: weekly publications over a year, each reading
// 3 weeks: any case touches exactly 3, so the per-person-year ε is the
// calibrated one; a second publication of the same origin costs nothing;
// an extra mid-week publication raises the worst day's cost.
func TestAccountantComposition(t *testing.T) {
	m, err := Calibrate([]float64{0.02, 0.02, 0.01}, 1, DefaultDelta)
	if err != nil {
		t.Fatal(err)
	}
	var a Accountant
	start := time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC)
	for k := range 52 {
		a.Add(start.AddDate(0, 0, 7*k), m)
		a.Add(start.AddDate(0, 0, 7*k), m) // the stored draw, republished
	}
	eps, day := a.CaseEpsilon(DefaultDelta)
	want := EpsilonOfRho(m.CaseRho(), DefaultDelta)
	if math.Abs(eps-want) > 1e-12 || eps > 1 {
		t.Errorf("per-person-year ε %v, want %v (≤ 1), worst day %v", eps, want, day)
	}
	a.Add(start.AddDate(0, 0, 7*10+3), m)
	eps2, day2 := a.CaseEpsilon(DefaultDelta)
	if !(eps2 > eps) {
		t.Errorf("an extra publication did not raise the worst case: %v then %v", eps, eps2)
	}
	if r := a.rhoOfDay(day2); math.Abs(r-(m.CaseRho()+m.rho(0))) > 1e-15 && math.Abs(r-(m.CaseRho()+m.rho(1))) > 1e-15 {
		t.Errorf("worst day %v: ρ %v is not 3 weeks plus one more publication", day2, r)
	}
}

func TestNoiseAndRange(t *testing.T) {
	m, err := Calibrate([]float64{0.03, 0.02}, 1, DefaultDelta)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const med = 4.2
	sum, sum2, n := 0.0, 0.0, 20000
	for range n {
		v, err := m.Noise(med, rng)
		if err != nil {
			t.Fatal(err)
		}
		sum += v - med
		sum2 += (v - med) * (v - med)
	}
	sd := math.Sqrt(sum2 / float64(n))
	if math.Abs(sum/float64(n)) > 4*m.Sigma()/math.Sqrt(float64(n))+m.Gamma || math.Abs(sd/m.Sigma()-1) > 0.03 {
		t.Errorf("noise mean %v, sd %v, want 0 and %v", sum/float64(n), sd, m.Sigma())
	}
	q := Range(med, DefaultSpread, m.Sigma(), DefaultKappa)
	if !q.Valid() || math.Abs(q.Median()-7*(math.Exp(med)-DefaultKappa)) > 1e-9 {
		t.Errorf("range %v: not valid or median not 7(e^m − κ)", q)
	}
	if q := Range(-10, DefaultSpread, m.Sigma(), DefaultKappa); q[0] != 0 || q.Median() != 0 || !(q[6] > 0) {
		t.Errorf("range below the floor: %v, want median and lower levels 0, upper above", q)
	}
	// The noise widens the range.
	if a, b := Range(med, DefaultSpread, 0, DefaultKappa), Range(med, DefaultSpread, 0.3, DefaultKappa); !(b[6]-b[0] > a[6]-a[0]) {
		t.Errorf("range with noise %v not wider than without %v", b, a)
	}
}

// TestStoreOneDrawPerOrigin: publishing the same area and origin again
// returns the stored draw, also after the store is written and read back;
// a new origin is a new draw and the accountant sees both.
func TestStoreOneDrawPerOrigin(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	f := projected(rng, DefaultKappa, 3, 0.1, 8)
	x := history(rng, 40)
	origin := time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC)
	var s Store
	a, stored, err := s.Publish("01001", origin, f, x, 1, DefaultDelta, DefaultSpread, rng)
	if err != nil || stored {
		t.Fatalf("first publication: stored %v, %v", stored, err)
	}
	var buf strings.Builder
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	s2, err := ReadStore(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, stored, err := s2.Publish("01001", origin, f, x, 1, DefaultDelta, DefaultSpread, rng)
		if err != nil || !stored || b.Median != a.Median || b.Quantiles() != a.Quantiles() {
			t.Fatalf("republished: %v (stored %v, %v), want the stored %v", b, stored, err, a)
		}
	}
	e1, _ := s2.CaseEpsilon(DefaultDelta)
	if _, stored, _ := s2.Publish("01001", origin.AddDate(0, 0, 7), f, x, 1, DefaultDelta, DefaultSpread, rng); stored {
		t.Error("a new origin returned a stored draw")
	}
	e2, _ := s2.CaseEpsilon(DefaultDelta)
	if !(e2 > e1) || e2 > 1 {
		t.Errorf("ε per person-year %v after one publication, %v after two: want it to grow and stay ≤ 1", e1, e2)
	}
	for _, bad := range []string{"{not json", `{"publications":[{"area":"a","origin":"2021-13-01","median_log":1,"kappa":50,"mechanism":{"Gamma":1,"Sigma2":4,"Steps":[2]}}]}`,
		`{"publications":[{"area":"a","origin":"2021-03-01","median_log":1,"kappa":50,"mechanism":{"Gamma":1,"Sigma2":0,"Steps":[2]}}]}`} {
		if _, err := ReadStore(strings.NewReader(bad)); err == nil {
			t.Errorf("a damaged store was read: %s", bad)
		}
	}
}

// TestAccountantLongWindow: a forecaster reading 9 weeks, published every
// week for a year. Adding one case on a day changes exactly the medians of
// the publications whose 9-week window holds that day, and those are the
// publications the accountant charges it for: 9 of them, so one case costs
// the calibrated ε over all 9 (ρ of every week slot added up), not the ε of
// one publication. Calibrating each publication alone to ε = 1 would cost a
// case far more; publishing every day makes it touch 63 publications.
func TestAccountantLongWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 9))
	f := projected(rng, DefaultKappa, 9, 1, 8)
	sens := f.Sensitivity()
	m, err := Calibrate(sens, 1, DefaultDelta)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC)
	daily := make([]float64, 7*70)
	for i := range daily {
		daily[i] = 30 + float64(i%11) // a steady level: every unit of the network sees it
	}
	origins := make([]time.Time, 52)
	var year Accountant
	for k := range origins {
		origins[k] = start.AddDate(0, 0, 7*(k+9))
		year.Add(origins[k], m)
	}
	dayIndex := func(d time.Time) int { return int(d.Sub(start).Hours() / 24) }
	median := func(x []float64, o time.Time) float64 {
		v, err := f.Median(x[:dayIndex(o)+1])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, d := range []time.Time{start.AddDate(0, 0, 7*20), start.AddDate(0, 0, 7*30+3), start.AddDate(0, 0, 7*40+6)} {
		plus := append([]float64(nil), daily...)
		plus[dayIndex(d)]++
		moved, charged := 0, 0
		for _, o := range origins {
			var one Accountant
			one.Add(o, m)
			reads := one.rhoOfDay(d) > 0
			if reads {
				charged++
			}
			if median(plus, o) != median(daily, o) {
				moved++
				if !reads {
					t.Errorf("a case on %v moved the publication of %v, which the accountant does not charge", d.Format(time.DateOnly), o.Format(time.DateOnly))
				}
			}
		}
		if charged != 9 || moved != 9 {
			t.Errorf("a case on %v: %d publications moved, %d charged, want 9 and 9", d.Format(time.DateOnly), moved, charged)
		}
		if r := year.rhoOfDay(d); math.Abs(r-m.CaseRho()) > 1e-12*r {
			t.Errorf("a case on %v: ρ %v, want the 9 week slots' %v", d.Format(time.DateOnly), r, m.CaseRho())
		}
	}
	eps, _ := year.CaseEpsilon(DefaultDelta)
	if eps > 1 || eps < 0.95 {
		t.Errorf("weekly publications reading 9 weeks: ε per person-year %v, want just below 1", eps)
	}
	// Calibrated for one publication alone, 9 of them cost a case much more.
	alone, err := Calibrate([]float64{sens[0]}, 1, DefaultDelta)
	if err != nil {
		t.Fatal(err)
	}
	if naive := EpsilonOfRho(9*alone.CaseRho(), DefaultDelta); naive < 2.5 {
		t.Errorf("9 publications each calibrated alone to ε = 1 cost %v: the test does not show why the window matters", naive)
	}
	var daily7 Accountant
	for k := range 7 * 20 {
		daily7.Add(start.AddDate(0, 0, k), m)
	}
	e7, _ := daily7.CaseEpsilon(DefaultDelta)
	if want := EpsilonOfRho(7*m.CaseRho(), DefaultDelta); math.Abs(e7-want) > 1e-9 || e7 < 2.5 {
		t.Errorf("daily publications: ε per person-year %v, want %v (63 publications read a day)", e7, want)
	}
	t.Logf("9-week window: a case touches 9 weekly publications, ε %.3f; daily publishing: 63, ε %.2f; 9 each calibrated alone: ε %.2f",
		eps, e7, EpsilonOfRho(9*alone.CaseRho(), DefaultDelta))
}

// TestCalibrateRefusals: an ε no noise can reach, or a bad ε or δ, is
// refused naming the flag and a value to try, in words (no q, T or c).
func TestCalibrateRefusals(t *testing.T) {
	sens := PublicForecaster().Sensitivity()
	for _, tc := range []struct {
		eps, delta float64
		want       string // "": calibrates
	}{
		{1, 1e-6, ""},
		{0.01, 1e-6, ""},
		{1e-5, 1e-6, "--publish-epsilon 1e-05 is too small: no amount of noise reaches it at δ = 1e-06; choose a larger ε, such as 0.1"},
		{1e-9, 1e-6, "--publish-epsilon 1e-09 is too small"},
		{0, 1e-6, "--publish-epsilon 0: write a number above 0"},
		{math.Inf(1), 1e-6, "--publish-epsilon +Inf: write a number above 0"},
		{1, 0, "--publish-delta 0: write a number between 0 and 1"},
	} {
		_, err := Calibrate(sens, tc.eps, tc.delta)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ε %v: %v", tc.eps, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "q=")):
			t.Errorf("ε %v, δ %v: got %v, want %q", tc.eps, tc.delta, err, tc.want)
		}
	}
}
