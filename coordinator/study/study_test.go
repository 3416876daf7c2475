package study

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/fltest"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

func names(n int) []string {
	var s []string
	for i := range n {
		s = append(s, "LHA "+string(rune('A'+i)))
	}
	return s
}

// small returns a small, fast study of n LHAs.
func small(t testing.TB, n int) (*File, []byte, *Secrets) {
	t.Helper()
	f, s, err := Create(CreateOptions{Names: names(n), Template: File{
		Settings: protocol.Settings{Name: "test", Epsilon: 3, Rounds: 6, ExpectedClients: n / 2, History: 4, Horizon: 2,
			Hidden: []int{8, 4}, LocalEpochs: 5, LearningRate: 0.01,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return f, raw, s
}

func TestParseRejects(t *testing.T) {
	_, raw, _ := small(t, 4)
	good := string(raw)
	if _, err := Parse(raw); err != nil {
		t.Fatalf("a created file does not parse: %v", err)
	}
	cases := []struct{ name, from, to string }{
		{"unknown field", `"name": "test"`, `"name": "test", "epsilonn": 1`},
		{"infinite budget", `"epsilon": 3`, `"epsilon": 1e999`},
		{"zero budget", `"epsilon": 3`, `"epsilon": -1`},
		{"m > N", `"expected_clients": 2`, `"expected_clients": 5`},
		{"version", `"version": 1`, `"version": 2`},
		{"smoothing", `"smoothing": "centered"`, `"smoothing": "weekly"`},
		{"round length", `"round_length": "1m0s"`, `"round_length": "soon"`},
		{"round length too short", `"round_length": "1m0s"`, `"round_length": "1ms"`},
		{"slack over half the length", `"round_slack": "6s"`, `"round_slack": "31s"`},
		{"negative slack", `"round_slack": "6s"`, `"round_slack": "-1s"`},
		{"delta = 1/N", `"delta": 0.00001`, `"delta": 0.25`},
		{"delta over 1/N", `"delta": 0.00001`, `"delta": 0.3`},
		{"infinite delta", `"delta": 0.00001`, `"delta": 1e999`},
		{"model larger than a frame", `"hidden": [`, `"hidden": [4096, 4096, 4096, `},
		{"admin hash", `"admin_token_sha256": "`, `"admin_token_sha256": "zz`},
		{"quorum", `"name": "test"`, `"name": "test", "start_quorum": 9`},
		{"negative restart grace", `"name": "test"`, `"name": "test", "restart_grace": "-1s"`},
		{"restart grace not a duration", `"name": "test"`, `"name": "test", "restart_grace": 5`},
		{"date", `"name": "test"`, `"name": "test", "from": "2020-13-01"`},
	}
	for _, c := range cases {
		if !strings.Contains(good, c.from) {
			t.Fatalf("%s: fixture lacks %q", c.name, c.from)
		}
		if _, err := Parse([]byte(strings.Replace(good, c.from, c.to, 1))); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Parse error %v, want ErrConfig", c.name, err)
		}
	}
	// Duplicate LHA name.
	f, _, _ := small(t, 4)
	f.LHAs[1].Name = f.LHAs[0].Name
	if err := f.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("duplicate name: %v", err)
	}
}

func TestQuorumAndResumeWait(t *testing.T) {
	_, raw, _ := small(t, 4)
	cases := []struct {
		name   string
		insert string
		quorum int
		wait   time.Duration
	}{
		{"defaults: all N, one round deadline", ``, 4, time.Minute},
		{"explicit quorum", `"start_quorum": 3,`, 3, time.Minute},
		{"explicit grace", `"restart_grace": "15s",`, 4, 15 * time.Second},
		{"grace follows the round length", `"round_length": "2s",`, 4, 2 * time.Second},
		{"grace over a short round", `"round_length": "2s", "restart_grace": "5s",`, 4, 5 * time.Second},
		{"both", `"start_quorum": 1, "restart_grace": "250ms",`, 1, 250 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The file's own round_length comes later and would win.
			b := strings.Replace(string(raw), `"round_length": "1m0s",`, "", 1)
			b = strings.Replace(b, `"round_slack": "6s",`, "", 1)
			b = strings.Replace(b, "{", "{"+c.insert, 1)
			f, err := Parse([]byte(b))
			if err != nil {
				t.Fatal(err)
			}
			if f.Quorum() != c.quorum || f.ResumeWait() != c.wait {
				t.Errorf("Quorum %d, ResumeWait %v; want %d, %v", f.Quorum(), f.ResumeWait(), c.quorum, c.wait)
			}
		})
	}
}

func TestCreateRefusesUncalibratable(t *testing.T) {
	_, _, err := Create(CreateOptions{Names: names(4), Template: File{Settings: protocol.Settings{Epsilon: 1e-9, Rounds: 1000, ExpectedClients: 4}}})
	if err == nil {
		t.Fatal("Create accepted ε=1e-9 over 1000 rounds at q=1")
	}
}

func TestTokens(t *testing.T) {
	f, _, s := small(t, 4)
	tk := NewTokens(f)
	for i, tok := range s.LHAs {
		if len(tok) != 43 {
			t.Errorf("token %d has %d characters, want 43", i, len(tok))
		}
		if got := tk.LHA(tok); got != i {
			t.Errorf("LHA(token %d) = %d", i, got)
		}
	}
	for _, bad := range []string{"", "x", s.Admin, s.LHAs[0] + "x", strings.ToUpper(s.LHAs[0])} {
		if tk.LHA(bad) != -1 {
			t.Errorf("LHA(%q) matched", bad)
		}
	}
	if !tk.Admin(s.Admin) || tk.Admin(s.LHAs[0]) {
		t.Error("Admin token check wrong")
	}
	if strings.Contains(string(must(f.Marshal())), s.LHAs[0]) {
		t.Error("study file contains a plain token")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// clientData makes deterministic windows for n clients with H inputs.
func clientData(n, h int) []fl.ClientData {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]fl.ClientData, n)
	for i := range out {
		k := 6 + i%3
		for range k {
			base := 1 + rng.Float64()
			for j := range h {
				out[i].X = append(out[i].X, base+0.1*float64(j))
			}
			out[i].Y = append(out[i].Y, base+0.5)
		}
	}
	return out
}

func openEngine(t *testing.T, f *File, raw []byte, path string, seed *uint64) *Engine {
	t.Helper()
	e, err := Open(f, raw, openLedger(t, path), &Options{InsecureSeed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// play runs rounds until the study ends or stop rounds were committed,
// submitting each sampled client's update in a shuffled order.
func play(t *testing.T, e *Engine, data []fl.ClientData, stop int) {
	t.Helper()
	tr := nn.NewTrainer(e.Model)
	shuffle := rand.New(rand.NewPCG(1, 2))
	for e.Rounds() < stop {
		r, err := e.Begin(nil)
		if errors.Is(err, ErrFinished) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		order := append([]int(nil), r.Sampled...)
		shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			d := make([]float64, len(e.Global()))
			fl.LocalUpdate(tr, e.Global(), data[c].X, data[c].Y, e.Config, d)
			if err := e.Submit(c, r.ID, d); err != nil {
				t.Fatal(err)
			}
		}
		res, err := commit(e)
		if err != nil {
			t.Fatal(err)
		}
		if res.Event.ModelSHA256 != protocol.HashHex(res.Weights) {
			t.Fatal("result hash does not match its weights")
		}
	}
}

// TestMatchesSimulation: in research mode the engine, fed updates in any
// order and interrupted by a reopen, reproduces fltest.Simulation bit for bit.
func TestMatchesSimulation(t *testing.T) {
	const n, seed = 8, uint64(42)
	f, raw, _ := small(t, n)
	data := clientData(n, f.History)
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := seed
	e := openEngine(t, f, raw, path, &s)
	play(t, e, data, 3)
	ledgerOf(e).Close()
	e = openEngine(t, f, raw, path, &s) // resume after round 3
	if e.Rounds() != 3 {
		t.Fatalf("resumed at round %d, want 3", e.Rounds())
	}
	play(t, e, data, f.Rounds)
	if e.Finished() != ReasonRounds {
		t.Fatalf("finished %q", e.Finished())
	}

	sim := &fltest.Simulation{Model: e.Model, Config: e.Config, Clients: data, Epsilon: f.Epsilon, Delta: f.Delta, Seed: seed, Workers: 1}
	srv, err := sim.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range srv.Global {
		if w != e.Global()[i] {
			t.Fatalf("parameter %d: simulation %v, engine %v", i, w, e.Global()[i])
		}
	}
	want, _ := privacy.Epsilon(f.SampleRate(), e.Config.NoiseMultiplier, f.Rounds, f.Delta)
	if got := e.EpsilonSpent(); math.Abs(got-want) > 1e-12 {
		t.Errorf("ε spent %v, accountant predicts %v", got, want)
	}
	if got := e.Events()[e.Rounds()-1].Epsilon; got > f.Epsilon {
		t.Errorf("ε %v over budget %v", got, f.Epsilon)
	}
}

func TestSubmitRejects(t *testing.T) {
	f, raw, _ := small(t, 8)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "l.db"), nil)
	dim := len(e.Global())
	if err := e.Submit(0, 1, make([]float64, dim)); !errors.Is(err, ErrStaleRound) {
		t.Errorf("update before any round: %v", err)
	}
	var r *Round
	for r == nil || len(r.Sampled) == 0 || len(r.Sampled) == 8 {
		if r != nil {
			if _, err := commit(e); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if r, err = e.Begin(nil); err != nil {
			t.Fatal(err)
		}
	}
	in := r.Sampled[0]
	out := -1
	for i := range 8 {
		if !r.IsSampled(i) {
			out = i
			break
		}
	}
	nan := make([]float64, dim)
	nan[3] = math.NaN()
	inf := make([]float64, dim)
	inf[0] = math.Inf(1)
	cases := []struct {
		name  string
		lha   int
		round int
		w     []float64
		want  error
	}{
		{"not sampled", out, r.ID, make([]float64, dim), ErrNotSampled},
		{"old round", in, r.ID - 1, make([]float64, dim), ErrStaleRound},
		{"future round", in, r.ID + 1, make([]float64, dim), ErrStaleRound},
		{"short", in, r.ID, make([]float64, dim-1), fl.ErrUpdateLength},
		{"NaN", in, r.ID, nan, fl.ErrNotFinite},
		{"Inf", in, r.ID, inf, fl.ErrNotFinite},
		{"good", in, r.ID, make([]float64, dim), nil},
		{"replay", in, r.ID, make([]float64, dim), ErrDuplicate},
	}
	for _, c := range cases {
		if err := e.Submit(c.lha, c.round, c.w); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if r.Received != 1 || r.Rejected != 3 {
		t.Errorf("received %d rejected %d, want 1 and 3", r.Received, r.Rejected)
	}
	if _, err := e.Begin(nil); !errors.Is(err, ErrRoundOpen) {
		t.Errorf("second Begin: %v", err)
	}
}

// TestOversizedUpdateIsReclipped: a client claiming a huge update moves the
// model by at most S/m plus noise.
func TestOversizedUpdateIsReclipped(t *testing.T) {
	f, raw, _ := small(t, 2)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "l.db"), nil)
	before := append([]float64(nil), e.Global()...)
	var r *Round
	for {
		var err error
		if r, err = e.Begin(nil); err != nil {
			t.Fatal(err)
		}
		if len(r.Sampled) > 0 {
			break
		}
		if _, err := commit(e); err != nil {
			t.Fatal(err)
		}
		before = append(before[:0], e.Global()...)
	}
	big := make([]float64, len(before))
	big[0] = 1e6
	if err := e.Submit(r.Sampled[0], r.ID, big); err != nil {
		t.Fatal(err)
	}
	if _, err := commit(e); err != nil {
		t.Fatal(err)
	}
	// Coordinate 0 moved by S/m + noise; the noise has σ = c·S/m. With a
	// bound of S/m + 8σ the false-rejection rate is below 1.3e-15.
	m := float64(f.ExpectedClients)
	sigma := e.Config.NoiseMultiplier * f.ClipNorm / m
	if d := math.Abs(e.Global()[0] - before[0]); d > f.ClipNorm/m+8*sigma {
		t.Errorf("coordinate 0 moved %v > S/m + 8σ = %v", d, f.ClipNorm/m+8*sigma)
	}
}

func TestBudgetEndsStudy(t *testing.T) {
	f, raw, _ := small(t, 4)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "l.db"), nil)
	for range f.Rounds {
		if _, err := e.Begin(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := commit(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Begin(nil); !errors.Is(err, ErrFinished) {
		t.Fatalf("Begin after T rounds: %v", err)
	}
	if reason := ledgerState(t, e).Finished; reason != ReasonRounds {
		t.Errorf("ledger finished reason %q", reason)
	}
	if e.EpsilonSpent() > f.Epsilon {
		t.Errorf("spent %v > budget %v", e.EpsilonSpent(), f.Epsilon)
	}
}

func TestResumeRefusesOtherStudy(t *testing.T) {
	f, raw, _ := small(t, 4)
	path := filepath.Join(t.TempDir(), "l.db")
	e := openEngine(t, f, raw, path, nil)
	ledgerOf(e).Close()
	g, raw2, _ := small(t, 4)
	l := openLedger(t, path)
	if _, err := Open(g, raw2, l, nil); !errors.Is(err, ErrMismatch) {
		t.Errorf("resume with another study file: %v", err)
	}
	seed := uint64(1)
	if _, err := Open(f, raw, l, &Options{InsecureSeed: &seed}); !errors.Is(err, ErrMismatch) {
		t.Errorf("resume switching to insecure seed: %v", err)
	}
}

// commit completes and releases the open round, as the server does at
// the end of a slot.
func commit(e *Engine) (*Result, error) {
	res, err := e.Complete()
	if err != nil {
		return nil, err
	}
	return res, e.Release()
}

// TestRemovedScheduleFields: a study file of an earlier version, with
// round_deadline or round_interval, is refused with what to write instead.
func TestRemovedScheduleFields(t *testing.T) {
	_, raw, _ := small(t, 4)
	for _, field := range []string{`"round_deadline": "60s",`, `"round_interval": "5s",`, `"round_deadline": "60s", "round_interval": "0s",`} {
		b := strings.Replace(string(raw), "{", "{"+field, 1)
		_, err := Parse([]byte(b))
		if !errors.Is(err, ErrConfig) {
			t.Fatalf("%s: Parse error %v, want ErrConfig", field, err)
		}
		for _, want := range []string{"no longer supported", `"round_length"`, "round_slack"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: message %q does not say %q", field, err, want)
			}
		}
	}
}

func TestScheduleDefaults(t *testing.T) {
	f := File{Settings: protocol.Settings{RoundLength: Duration(2 * time.Second)}}
	f.Defaults()
	if f.RoundSlack != Duration(200*time.Millisecond) || f.Window() != 1800*time.Millisecond {
		t.Errorf("slack %v, window %v; want 200ms and 1.8s", time.Duration(f.RoundSlack), f.Window())
	}
	var g File
	g.Defaults()
	if time.Duration(g.RoundLength) != DefaultRoundLength || time.Duration(g.RoundSlack) != DefaultRoundLength/10 {
		t.Errorf("defaults: length %v, slack %v", time.Duration(g.RoundLength), time.Duration(g.RoundSlack))
	}
}

// TestNumParamsMatchesModel: the allocation-free count used by Validate is
// the model's.
func TestNumParamsMatchesModel(t *testing.T) {
	for _, layers := range [][]int{{10, 128, 64, 32, 1}, {4, 8, 4, 1}, {1, 1}} {
		if got, want := protocol.ParamCount(layers), nn.NewMLP(layers...).NumParams(); got != want {
			t.Errorf("%v: ParamCount %d, model %d", layers, got, want)
		}
	}
	if protocol.ParamCount([]int{10, 4096, 4096, 4096, 1}) <= protocol.MaxWeights {
		t.Error("three hidden layers of 4096 fit a frame?")
	}
}

// TestRoundLifeCycle walks a round through its phases and checks that each
// transition is refused out of order.
func TestRoundLifeCycle(t *testing.T) {
	f, raw, _ := small(t, 4)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "l.db"), nil)
	if err := e.Release(); !errors.Is(err, ErrNotCommitted) {
		t.Errorf("Release with no round: %v", err)
	}
	online := func(lha int) bool { return lha%2 == 0 }
	r, err := e.Begin(online)
	if err != nil {
		t.Fatal(err)
	}
	wantOnline := 0
	for _, i := range r.Sampled {
		if online(i) {
			wantOnline++
		}
	}
	if r.Phase() != PhaseOpen || e.Current() != r || r.Online != wantOnline {
		t.Fatalf("after Begin: phase %v, online %d (want %d)", r.Phase(), r.Online, wantOnline)
	}
	if err := e.Release(); !errors.Is(err, ErrNotCommitted) {
		t.Errorf("Release of an open round: %v", err)
	}
	if _, err := e.Complete(); err != nil {
		t.Fatal(err)
	}
	if r.Phase() != PhaseCommitted {
		t.Fatalf("after Complete: %v", r.Phase())
	}
	if err := e.Submit(0, r.ID, make([]float64, len(e.Global()))); !errors.Is(err, ErrStaleRound) {
		t.Errorf("Submit to a committed round: %v", err)
	}
	if _, err := e.Begin(nil); !errors.Is(err, ErrRoundOpen) {
		t.Errorf("Begin before the release: %v", err)
	}
	if err := e.Abandon(); !errors.Is(err, ErrCommitted) {
		t.Errorf("Abandon of a committed round: %v", err)
	}
	if _, err := e.Complete(); !errors.Is(err, ErrStaleRound) {
		t.Errorf("second Complete: %v", err)
	}
	if err := e.Release(); err != nil || r.Phase() != PhaseReleased || e.Current() != nil {
		t.Fatalf("Release: %v, phase %v", err, r.Phase())
	}
	r2, err := e.Begin(nil)
	if err != nil || r2.ID != 2 {
		t.Fatalf("Begin after release: round %v, %v", r2, err)
	}
	if err := e.Abandon(); err != nil || r2.Phase() != PhaseAbandoned || e.Current() != nil {
		t.Fatalf("Abandon: %v, phase %v", err, r2.Phase())
	}
	if e.Rounds() != 1 {
		t.Errorf("an abandoned round counted: %d rounds", e.Rounds())
	}
}

// TestAbandonResetsAggregate is the regression test of the double count:
// an update taken in a round that is then abandoned must not be in the
// next round's sum. (Before rounds had phases, the server dropped the open
// round with `eng.Open = nil` and the aggregator kept the update: the next
// round summed it again, sensitivity 2S, unaccounted.)
func TestAbandonResetsAggregate(t *testing.T) {
	f, raw, _ := small(t, 4)
	e := openEngine(t, f, raw, filepath.Join(t.TempDir(), "l.db"), nil)
	var r *Round
	for r == nil || len(r.Sampled) == 0 {
		if r != nil {
			if err := e.Abandon(); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if r, err = e.Begin(nil); err != nil {
			t.Fatal(err)
		}
	}
	u := make([]float64, len(e.Global()))
	u[0] = 0.3
	if err := e.Submit(r.Sampled[0], r.ID, u); err != nil {
		t.Fatal(err)
	}
	if e.agg.Received() != 1 {
		t.Fatalf("aggregate holds %d updates, want 1", e.agg.Received())
	}
	if err := e.Abandon(); err != nil {
		t.Fatal(err)
	}
	if n := e.agg.Received(); n != 0 {
		t.Fatalf("after Abandon the aggregate still holds %d update(s)", n)
	}
	r2, err := e.Begin(nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.ID != r.ID {
		t.Errorf("the round after an abandoned one is %d, want %d again", r2.ID, r.ID)
	}
	if e.agg.Received() != 0 {
		t.Fatalf("a new round starts with %d update(s) in its sum", e.agg.Received())
	}
	if _, err := commit(e); err != nil {
		t.Fatal(err)
	}
	parts := ledgerState(t, e).Participation
	if len(parts) != 1 || parts[0].Received != 0 {
		t.Errorf("participation %+v; want one round with 0 received", parts)
	}
}

// TestPublicMapping: the coordinator's fl configuration is the one its
// LHAs derive from the public view they receive, and the defaults are the
// paper's (shared/model).
func TestPublicMapping(t *testing.T) {
	f, _, _ := small(t, 8)
	f.Accountant = privacy.AccountantPLD
	st := f.Public(1.7, false)
	got, err := st.FLConfig()
	if err != nil {
		t.Fatal(err)
	}
	if want := f.Config(1.7); !reflect.DeepEqual(got, want) {
		t.Fatalf("public view's config %+v, file's %+v", got, want)
	}
	if got.Accountant != privacy.AccountantPLD || got.NoiseMultiplier != 1.7 || got.Clients != 8 {
		t.Fatalf("config %+v", got)
	}
	var d File
	d.Defaults()
	p := model.Paper
	if d.ClipNorm != p.Clip || d.LocalEpochs != p.LocalEpochs || d.LearningRate != p.LearningRate ||
		!slices.Equal(d.Hidden, p.Hidden) || d.History != model.PaperHistory || d.Horizon != model.PaperHorizon ||
		d.Delta != model.PaperDelta || d.TrainFraction != model.PaperTrainFraction {
		t.Fatalf("defaults %+v are not the paper's %+v", d, p)
	}
	d.Hidden[0] = 1
	if model.Paper.Hidden[0] == 1 {
		t.Fatal("Defaults shares the paper's hidden sizes")
	}
}
