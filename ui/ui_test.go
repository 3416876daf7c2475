package ui

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/vugu/vugu"
)

func TestFormatCount(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {7, "7"}, {1234, "1,234"}, {1234567.4, "1,234,567"}, {12.34, "12.3"}, {1.5, "1.5"},
		{0.25, "0.25"}, {-3, "−3"}, {-1500, "−1,500"}, {math.NaN(), "–"}, {math.Inf(1), "∞"}, {150.6, "151"},
	} {
		if got := FormatCount(tc.v); got != tc.want {
			t.Errorf("FormatCount(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestFormatWords(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{FormatDelta(1e-5), "1 in 100,000"},
		{FormatDelta(3e-6), "3e-06"},
		{FormatEpsilon(2.5549), "2.55"},
		{FormatEpsilon(math.Inf(1)), "∞"},
		{FormatPercent(0.25), "25 %"},
		{FormatPercent(0.851), "85.1 %"},
		{FormatBytes(98360), "98,360 bytes (96 KB)"},
		{FormatBytes(3 << 20), "3,145,728 bytes (3.0 MB)"},
		{FormatBytes(76), "76 bytes"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 147, []float64{0, 50, 100, 150}},
		{0, 3, []float64{0, 1, 2, 3}},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 9800, []float64{0, 2000, 4000, 6000, 8000, 10000}},
	} {
		got := niceTicks(tc.lo, tc.hi, 5)
		if len(got) != len(tc.want) {
			t.Errorf("niceTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("niceTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
				break
			}
		}
	}
}

func TestDateTicks(t *testing.T) {
	day := func(s string) float64 {
		d, _ := time.Parse(time.DateOnly, s)
		return Day(d)
	}
	// 92 days: every 14 days on Mondays.
	ticks := dateTicks(day("2020-10-01"), day("2020-12-31"))
	if len(ticks) < 5 || len(ticks) > 8 {
		t.Fatalf("%d ticks for 92 days", len(ticks))
	}
	for _, x := range ticks {
		if wd := DayTime(x).Weekday(); wd != time.Monday {
			t.Errorf("tick %s is a %s, want Monday", DayTime(x).Format(time.DateOnly), wd)
		}
	}
	// Two years: month starts.
	for _, x := range dateTicks(day("2020-03-15"), day("2022-04-30")) {
		if DayTime(x).Day() != 1 {
			t.Errorf("tick %s is not the 1st of a month", DayTime(x).Format(time.DateOnly))
		}
	}
	if got := DayTime(day("2021-01-04")).Format(time.DateOnly); got != "2021-01-04" {
		t.Errorf("Day/DayTime round trip gave %s", got)
	}
}

func TestChartLayout(t *testing.T) {
	c := &Chart{Dates: true, Lines: []Line{
		{Name: "raw", Points: []Point{{100, 0}, {101, 10}, {102, math.NaN()}, {103, 20}}},
		{Name: "bars", Bars: true, Points: []Point{{100, 5}}},
	}, HRefs: []Ref{{At: 30, Label: "budget"}}}
	p := c.Layout()
	if p.Empty {
		t.Fatal("empty")
	}
	// The NaN breaks the line: two move-tos.
	if n := strings.Count(p.Paths[0].D, "M"); n != 2 {
		t.Errorf("path %q has %d segments, want 2", p.Paths[0].D, n)
	}
	if !strings.Contains(p.Paths[1].D, "V") {
		t.Errorf("bars path %q", p.Paths[1].D)
	}
	// The y axis reaches the reference line (30) and starts at 0.
	if top := p.YTicks[len(p.YTicks)-1].Label; top != "30" {
		t.Errorf("top y tick %q, want 30", top)
	}
	if p.YTicks[0].Label != "0" {
		t.Errorf("bottom y tick %q", p.YTicks[0].Label)
	}
	if len(p.Legend) != 2 {
		t.Errorf("%d legend items", len(p.Legend))
	}
	if (&Chart{}).Layout().Empty != true {
		t.Error("a chart without points must be empty")
	}
}

func TestDataProblem(t *testing.T) {
	b, err := os.ReadFile("../coordinator/e2e/testdata/bad.csv")
	if err != nil {
		t.Fatal(err)
	}
	s := &JoinState{}
	s.LoadFile("bad.csv", b)
	p := s.DataProblem
	if p == nil || s.Data != nil {
		t.Fatal("bad.csv was accepted")
	}
	if p.Title != "A case count is negative" || p.Where != "line 15, column 3 (cases)" || !strings.Contains(p.Detail, `"-4"`) || p.Fix == "" {
		t.Errorf("problem %+v", p)
	}
	if p := DataProblem(errors.New("boom")); p.Fix == "" || p.Title == "" {
		t.Errorf("generic problem %+v", p)
	}
}

// fakeSession replays a study: it reports through the observer what the
// real client would, and returns a fixed model.
type fakeSession struct {
	model  []float64
	rounds int
	eps    []float64
	local  []float64
}

func (f *fakeSession) Run(ctx context.Context, d *series.Dataset, obs session.Observer) error {
	obs.Sent(session.Outgoing{Type: "hello", Bytes: 76})
	for r := 1; r <= f.rounds; r++ {
		obs.State(session.StateSampled)
		obs.Progress(r, 0, 30)
		obs.Progress(r, 30, 30)
		obs.Sent(session.Outgoing{Type: "update", Round: r, Bytes: int(protocol.FrameSize(len(f.model)))})
		obs.State(session.StateSent)
		obs.Result(session.Result{Round: r, Sampled: true, Epsilon: f.eps[r-1], LocalEpsilon: f.local[r-1]})
	}
	obs.State(session.StateFinished)
	return nil
}
func (f *fakeSession) Model() []float64 { return f.model }
func (f *fakeSession) Close() error     { return nil }

func TestJoinStateFlow(t *testing.T) {
	csv, err := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "t", Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
			TrainFraction: 0.9}}
	// A model that predicts the last input value: weight 1 on x[9].
	model := make([]float64, 11)
	model[9] = 1
	for _, tc := range []struct {
		name  string
		local []float64
		match bool
	}{
		{"matching", []float64{1.5, 2.9}, true},
		{"mismatch", []float64{1.5, 2.5}, false},
	} {
		sess := &fakeSession{model: model, rounds: 2, eps: []float64{1.5, 2.9}, local: tc.local}
		done := make(chan struct{})
		env := vugu.NewEventEnvImpl(&sync.RWMutex{}, nil)
		s := &JoinState{Env: env, Link: "x", Connect: func(ctx context.Context, link string) (Session, *protocol.Welcome, error) {
			defer close(done)
			return sess, &protocol.Welcome{Study: st, LHA: "me", State: protocol.StateWaiting}, nil
		}}
		s.Start(context.Background())
		<-done
		phase := func() Phase {
			env.RLock()
			defer env.RUnlock()
			return s.Phase
		}
		for phase() == PhaseConnecting {
			time.Sleep(time.Millisecond)
		}
		if s.CanJoin() {
			t.Fatalf("%s: can join without data", tc.name)
		}
		s.LoadFile("lha.csv", csv)
		if !s.CanJoin() || len(s.Areas) != 2 || s.DataChart == nil || len(s.Preview) != 10 {
			t.Fatalf("%s: after loading: canJoin %v, %d areas, problem %+v", tc.name, s.CanJoin(), len(s.Areas), s.DataProblem)
		}
		env.Lock()
		s.Join(context.Background()) // as the button's handler: under the lock
		env.UnlockOnly()
		busy := func() bool {
			env.RLock()
			defer env.RUnlock()
			return s.Phase == PhaseRunning || s.Forecasting
		}
		for deadline := time.Now().Add(20 * time.Second); busy() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		env.RLock()
		checkFinished(t, tc.name, s, csv, tc.match)
		env.RUnlock()
	}
}

func checkFinished(t *testing.T, name string, s *JoinState, csv []byte, match bool) {
	t.Helper()
	tc := struct {
		name  string
		match bool
	}{name, match}
	{
		if s.Phase != PhaseFinished {
			t.Fatalf("%s: phase %s, problem %+v", tc.name, s.Phase, s.RunProblem)
		}
		if s.Round != 2 || s.Epsilon != 2.9 || s.EpsilonMatch != tc.match {
			t.Errorf("%s: round %d, ε %v, match %v", tc.name, s.Round, s.Epsilon, s.EpsilonMatch)
		}
		if len(s.Sent) != 3 || s.Sent[0].Type != "hello" || s.SentTotal() != 76+2*protocol.FrameSize(11) {
			t.Errorf("%s: sent log %+v", tc.name, s.Sent)
		}
		if len(s.Forecasts) != 2 {
			t.Fatalf("%s: %d forecasts", tc.name, len(s.Forecasts))
		}
		// The model copies the last smoothed input: the forecast equals the
		// 7-day average on the input's last day, for a target 7 days on.
		f := s.Forecasts[0]
		d, _ := series.Parse(strings.NewReader(string(csv)), "lha.csv")
		r := d.Region(f.Area)
		avg := make([]float64, len(r.Cases))
		series.MovingAverage7(avg, r.Cases, series.Centered)
		if want := avg[r.Index(f.InputEnd)]; math.Abs(f.Value-want) > 1e-9 {
			t.Errorf("%s: forecast %v, want %v", tc.name, f.Value, want)
		}
		if got := f.Target.Sub(f.InputEnd); got != 7*24*time.Hour {
			t.Errorf("%s: target %v after the input", tc.name, got)
		}
		// The range: valid quantiles around the same median, drawn as two
		// bands, and a hub file with every area and level.
		if !f.Quantiles.Valid() || f.Quantiles.Median() <= 0 {
			t.Errorf("%s: quantiles %v", tc.name, f.Quantiles)
		}
		if pl := f.Chart.Layout(); len(pl.Bands) != 2 || !strings.HasSuffix(pl.Bands[0].D, "Z") {
			t.Errorf("%s: chart bands %+v", tc.name, pl.Bands)
		}
		hub, err := forecast.ReadHub(strings.NewReader(s.Hub))
		if err != nil || len(hub) != 2 || hub[0].Location != f.Area || math.Abs(hub[0].Quantiles[6]-f.Quantiles[6]) > 5e-4 {
			t.Errorf("%s: hub file %v (%v):\n%s", tc.name, hub, err, s.Hub)
		}
		if s.Recent.N == 0 || s.Recent.In95 < s.Recent.In50 {
			t.Errorf("%s: recent coverage %+v", tc.name, s.Recent)
		}
		if s.Metrics == nil || s.Metrics.N == 0 || math.IsNaN(s.Metrics.MAE) {
			t.Errorf("%s: metrics %+v (%s)", tc.name, s.Metrics, s.MetricsNote)
		}
	}
}

func TestPageOf(t *testing.T) {
	for path, want := range map[string]Page{"/": PageHome, "/join": PageJoin, "/join/": PageJoin, "/admin": PageAdmin, "/x": PageHome} {
		if got := PageOf(path); got != want {
			t.Errorf("PageOf(%q) = %s, want %s", path, got, want)
		}
	}
}

func TestChartBands(t *testing.T) {
	c := &Chart{
		Lines: []Line{{Name: "forecast", Points: []Point{{0, 10}, {4, 12}}}},
		Bands: []Band{{Name: "95 % range", Class: "band95", Points: []BandPoint{{0, 10, 10}, {4, 6, 40}}},
			{Name: "empty", Class: "x", Points: []BandPoint{{1, math.NaN(), 2}}}},
	}
	p := c.Layout()
	if len(p.Bands) != 1 || p.Bands[0].Class != "band95" {
		t.Fatalf("bands %+v: want the one drawable band", p.Bands)
	}
	// The y axis reaches the band's top (40), above every line point.
	if top := p.YTicks[len(p.YTicks)-1]; !strings.Contains(top.Label, "40") {
		t.Errorf("y axis tops out at %q, want it to include the band's 40", top.Label)
	}
	// The shape runs along the upper edge and back along the lower one.
	if d := p.Bands[0].D; !strings.HasPrefix(d, "M") || strings.Count(d, "L") != 3 || !strings.HasSuffix(d, "Z") {
		t.Errorf("band path %q", d)
	}
	legend := false
	for _, l := range p.Legend {
		legend = legend || l.Band && l.Name == "95 % range"
	}
	if !legend {
		t.Errorf("legend %+v lacks the band", p.Legend)
	}
}

func TestForecastShown(t *testing.T) {
	if got := (Forecast{Value: -3}).Shown(); got != "0" {
		t.Errorf("no range, negative output: %q", got)
	}
	f := Forecast{Value: 5, Quantiles: forecast.Quantiles{1, 2, 4, 7, 9, 12, 20}}
	if got := f.Shown(); got != "7" {
		t.Errorf("with a range: %q, want the median 7", got)
	}
	if got := f.Range95() + "; " + f.Range50(); got != "between 1 and 20; between 4 and 9" {
		t.Errorf("ranges in words: %q", got)
	}
}
