package study

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// lipschitzCases is one area's daily counts: a wave of about level cases
// a day, reported with day-to-day noise.
func lipschitzCases(level float64, days int, rng *rand.Rand) *series.Dataset {
	c := make([]float64, days)
	for i := range c {
		wave := 1 + 0.8*math.Sin(2*math.Pi*float64(i)/70)
		c[i] = math.Round(level * wave * (0.8 + 0.4*rng.Float64()))
	}
	return &series.Dataset{Regions: []*series.Region{{Name: "area", Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Cases: c}}}
}

// TestLipschitzLiveStudy runs a live study of the Lipschitz design
// (study new --preset lipschitz) through the round driver, each LHA
// training its own data the way shared/session does (TrainingData, the
// study's fl.Config: spectral normalisation while training), and checks
// that every released model, as hashed and sent, has spectral norm ≤ 1 in
// every layer; that an LHA publishes with the study's final model (not
// the public no-change model) under a marking naming its hash; that the
// forecaster is the study model's own forecast; and that the sensitivity
// bound holds by brute force for that model.
func TestLipschitzLiveStudy(t *testing.T) {
	const n = 4
	design := model.LipschitzDesign
	f, _, err := Create(CreateOptions{Names: names(n), Design: &design, Template: File{
		Settings: protocol.Settings{Name: "publishable", Epsilon: 8, Rounds: 3, ExpectedClients: n, Horizon: 7, Smoothing: "trailing"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(27)
	e, err := Open(f, raw, &MemStore{}, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	st := e.Study
	if st.Features != "lipschitz" || st.Layers[0] != model.LipschitzHistory {
		t.Fatalf("study features %q layers %v", st.Features, st.Layers)
	}
	cfg, err := st.FLConfig()
	if err != nil || len(cfg.Spectral) == 0 {
		t.Fatalf("the study's fl.Config %+v (%v) does not train spectrally", cfg, err)
	}
	mlp := nn.NewMLP(st.Layers...)
	largest := 0.0
	checkNorms := func(what string, w []float64) {
		t.Helper()
		for l, s := range mlp.SpectralNorms(w) {
			largest = max(largest, s)
			if s > 1 {
				t.Errorf("%s: layer %d has spectral norm %v > 1", what, l+1, s)
			}
		}
	}
	rng := rand.New(rand.NewPCG(27, 1))
	data := make([]*series.Dataset, n)
	for i := range data {
		data[i] = lipschitzCases(float64(20+60*i), 150, rng)
	}
	tr := newFake(n)
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c, err := NewCoordinator(e, DriverOptions{Transport: tr}, t0)
	if err != nil {
		t.Fatal(err)
	}
	trainer := nn.NewTrainer(mlp)
	var released []float64
	results := 0
	at := t0
	for range 200 {
		next, err := c.Tick(at)
		if err != nil {
			t.Fatal(err)
		}
		for lha := range n {
			for _, m := range tr.take(lha) {
				switch m := m.(type) {
				case *protocol.RoundStart:
					checkNorms("a round's starting model", m.Weights)
					if !m.Picked {
						continue
					}
					x, y, err := session.TrainingData(st, data[lha])
					if err != nil || len(y) == 0 {
						t.Fatalf("LHA %d: %d windows, %v", lha, len(y), err)
					}
					d := make([]float64, len(m.Weights))
					fl.LocalUpdate(trainer, m.Weights, x, y, cfg, d)
					_, b, err := protocol.Encode(&protocol.Update{Round: m.Round, Weights: d})
					if err != nil {
						t.Fatal(err)
					}
					c.Frame(lha, b, at.Add(time.Second), func(protocol.Kind, []byte) {})
				case *protocol.RoundResult:
					if protocol.HashHex(m.Weights) != m.Event.ModelSHA256 {
						t.Fatalf("round %d: the hash is not of the model sent", m.Event.Round)
					}
					checkNorms("a released model", m.Weights)
					released = m.Weights
					results++
				}
			}
		}
		if next.Finished {
			break
		}
		if !next.At.IsZero() {
			at = next.At
		} else {
			at = at.Add(time.Second)
		}
	}
	if results != n*st.Rounds || released == nil {
		t.Fatalf("%d round results, want %d", results, n*st.Rounds)
	}
	// The noise of a round at ε = 8 over 4 LHAs pushes layers beyond 1:
	// the projection brought them to 1.
	if largest < 0.999 {
		t.Errorf("the largest layer norm of any model sent is %v: no model needed the projection, so the test shows nothing", largest)
	}
	checkPublishedStudyModel(t, st, released, data[1])
}

// checkPublishedStudyModel publishes data with the study's released model
// and checks the forecaster, the marking and the bound.
func checkPublishedStudyModel(t *testing.T, st protocol.Study, released []float64, data *series.Dataset) {
	t.Helper()
	f, sha, err := publish.ForStudy(st, released)
	if err != nil {
		t.Fatal(err)
	}
	if sha != protocol.HashHex(released) {
		t.Fatalf("marked hash %s, want the released model's", sha)
	}
	daily := data.Regions[0].Cases
	m, err := f.Median(daily)
	if err != nil {
		t.Fatal(err)
	}
	zero, _ := publish.PublicForecaster().Median(daily)
	if math.Abs(m-zero) < 1e-9 {
		t.Errorf("the study model's median %v is the no-change model's %v", m, zero)
	}
	// The forecaster is the study model's own forecast on the trailing
	// weekly averages the LHA trained on.
	h := model.LipschitzHistory
	x := make([]float64, h)
	for i := range x {
		end := len(daily) - (h - 1 - i)
		s := 0.0
		for _, v := range daily[end-7 : end] {
			s += v
		}
		x[i] = s / 7
	}
	got := []float64{0}
	model.Lipschitz.PredictDamped(nn.NewMLP(st.Layers...), released, x, got, st.Damping)
	if want := math.Exp(m) - publish.DefaultKappa; math.Abs(got[0]-want) > 1e-9*(1+want) {
		t.Errorf("the study model forecasts %v, the publishable forecaster %v", got[0], want)
	}
	var store publish.Store
	ps, mark, err := store.PublishAll(data, f, 1, 1e-6, rand.New(rand.NewPCG(1, 2)))
	if err != nil || len(ps) != 1 {
		t.Fatalf("published %d forecasts: %v", len(ps), err)
	}
	mark = mark.ForModel(sha)
	b, _ := json.Marshal(mark)
	if !mark.DP || !strings.Contains(mark.Text(), sha) || !bytes.Contains(b, []byte(`"model_sha256":"`+sha+`"`)) {
		t.Errorf("the marking does not name the model: %s / %s", mark.Text(), b)
	}
	checkBound(t, f, rand.New(rand.NewPCG(3, 4)))
}

// checkBound changes every day of f's window by one case, up and down,
// for random and adversarial histories, and fails if the median moves by
// more than the bound of that day's week.
func checkBound(t *testing.T, f *publish.Forecaster, rng *rand.Rand) {
	t.Helper()
	sens := f.Sensitivity()
	days := f.Days()
	worst := 0.0
	for trial := range 300 {
		daily := make([]float64, days)
		for i := range daily {
			switch trial % 3 {
			case 0: // zeros and single cases: the steepest part of the log
				daily[i] = float64(rng.IntN(2))
			case 1:
				daily[i] = math.Floor(rng.ExpFloat64() * 200)
			default: // a jump between the weeks
				daily[i] = float64((i / 7 % 2) * rng.IntN(5000))
			}
		}
		m, err := f.Median(daily)
		if err != nil {
			t.Fatal(err)
		}
		for i := range daily {
			w := (days - 1 - i) / publish.WeekDays
			for _, d := range []float64{-1, 1} {
				if daily[i]+d < 0 {
					continue
				}
				daily[i] += d
				m2, _ := f.Median(daily)
				daily[i] -= d
				if diff := math.Abs(m2 - m); diff > sens[w]*(1+1e-12) {
					t.Fatalf("trial %d, day %d (week %d): the median moved %v, above the bound %v", trial, i, w, diff, sens[w])
				} else {
					worst = max(worst, diff/sens[w])
				}
			}
		}
	}
	if worst == 0 {
		t.Error("no single-case change moved the median: the check checks nothing")
	}
	t.Logf("largest change: %.3f of the bound", worst)
}
