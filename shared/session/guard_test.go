package session

import (
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// linear is an area whose cases grow by 10 a day: a trend that no change
// misses and an extrapolation forecasts exactly.
func linear(name string, days int) *series.Region {
	c := make([]float64, days)
	for i := range c {
		c[i] = 100 + 10*float64(i)
	}
	return &series.Region{Name: name, Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Cases: c}
}

func guardStudy() protocol.Study {
	return protocol.Study{Layers: []int{10, 1}, Settings: protocol.Settings{History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.6}}
}

// The held-out origins are weekly and never reach a day training used as
// a target; a long file gives enough of them, a short one too few.
func TestHeldOutOrigins(t *testing.T) {
	st := guardStudy()
	for _, tc := range []struct {
		days, want int
	}{{200, 11}, {60, 3}} {
		d := &series.Dataset{Regions: []*series.Region{linear("a", tc.days)}}
		held, err := HeldOutOrigins(st, d, forecast.Persistence)
		if err != nil {
			t.Fatal(err)
		}
		os := held["a"]
		if len(os) != tc.want {
			t.Errorf("%d days: %d held-out weekly origins, want %d", tc.days, len(os), tc.want)
		}
		opt, _ := WindowOptions(st)
		areas, _ := series.MakeWindows(d, opt)
		train, _ := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
		last := train[0].Windows[len(train[0].Windows)-1].Target
		for i, o := range os {
			if !o.InputEnd.AddDate(0, 0, st.Horizon).After(last) {
				t.Errorf("origin %v: its target is a training day (training ends %v)", o.InputEnd, last)
			}
			if i > 0 && os[i-1].InputEnd.Sub(o.InputEnd) != 7*24*time.Hour {
				t.Errorf("origins %v and %v are not a week apart", os[i-1].InputEnd, o.InputEnd)
			}
		}
	}
}

// The switch: with ≥ 8 held-out weeks a model that beats no change is
// headlined; with too few, no change is, the model shown beside it.
func TestGuardedSwitch(t *testing.T) {
	st := guardStudy()
	trend := func(x []float64) float64 { return x[len(x)-1] + 7*(x[len(x)-1]-x[len(x)-2]) }
	for _, tc := range []struct {
		days int
		want forecast.Method
	}{{200, forecast.MethodModel}, {60, forecast.MethodNoChange}} {
		d := &series.Dataset{Regions: []*series.Region{linear("a", tc.days)}}
		gs, _, err := Guarded(st, d, trend, nil, nil)
		if err != nil || len(gs) != 1 {
			t.Fatalf("%d days: %v, %d forecasts", tc.days, err, len(gs))
		}
		g := gs[0]
		if g.Method != tc.want || g.ModelClamped {
			t.Errorf("%d days: %s on %d weeks (model %g, no change %g)", tc.days, g.Method, g.Origins, g.ModelMAE, g.NoChangeMAE)
		}
		want := g.NoChange
		if tc.want == forecast.MethodModel {
			want = g.Model.Point
		}
		if g.Value != want || g.Forecast.Point != want {
			t.Errorf("%d days: headline %g, forecast %g, want %g", tc.days, g.Value, g.Forecast.Point, want)
		}
		if tc.want == forecast.MethodNoChange && !strings.Contains(g.Reason(), forecast.TooFewWeeks) {
			t.Errorf("reason %q", g.Reason())
		}
	}
	// Issued forecasts count too: 60 days give 3 held-out weeks, 5 more
	// issued ones make 8.
	d := &series.Dataset{Regions: []*series.Region{linear("a", 60)}}
	var issued []forecast.GuardOrigin
	for i := range 5 {
		issued = append(issued, forecast.GuardOrigin{Area: "a", InputEnd: time.Date(2023, 6, 1+i, 0, 0, 0, 0, time.UTC), Model: 10, NoChange: 5, Actual: 10})
	}
	gs, _, err := Guarded(st, d, trend, issued, nil)
	if err != nil || gs[0].Method != forecast.MethodModel || gs[0].Origins != 8 {
		t.Errorf("with issued forecasts: %v, %+v", err, gs[0].Judgement)
	}
}

// An absurd model is never headlined as it is: the hub file carries no
// change's quantiles, the sidecar names the method and the clamp.
func TestGuardedClampAndSidecar(t *testing.T) {
	st := guardStudy()
	d := &series.Dataset{Regions: []*series.Region{linear("a", 200), linear("b", 60)}}
	absurd := func(x []float64) float64 { return 150 * x[len(x)-1] }
	gs, cov, err := Guarded(st, d, absurd, nil, nil)
	if err != nil || len(gs) != 2 {
		t.Fatal(err, len(gs))
	}
	// The coverage is that of the ranges headlined: no change's here.
	if _, base, _ := PointForecasts(st, d, forecast.Persistence); cov != base || cov.N == 0 {
		t.Errorf("coverage %+v, no change's %+v", cov, base)
	}
	for _, g := range gs {
		if g.Method != forecast.MethodNoChange || !g.ModelClamped || g.ModelShown >= g.Model.Point || g.Forecast.Quantiles.Median() > 2*g.NoChange {
			t.Errorf("%s: %+v", g.Forecast.Area, g.Headline)
		}
	}
	var hub, side strings.Builder
	if err := forecast.WriteHub(&hub, GuardedHub(gs)); err != nil {
		t.Fatal(err)
	}
	if err := WriteMethods(&side, gs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(side.String())).ReadAll()
	if err != nil || len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(MethodsColumns, ",") {
		t.Fatalf("sidecar %v: %q", err, side.String())
	}
	for i, r := range rows[1:] {
		if r[0] != gs[i].Forecast.Area || r[1] != "no change" || r[6] != "true" {
			t.Errorf("sidecar row %v", r)
		}
	}
	if rows[1][2] != "11" || rows[2][2] != "3" {
		t.Errorf("weeks judged %s and %s, want 11 and 3", rows[1][2], rows[2][2])
	}
	hubRows, err := forecast.ReadHub(strings.NewReader(hub.String()))
	if err != nil || len(hubRows) != 2 {
		t.Fatal(err)
	}
	for i, h := range hubRows {
		if math.Abs(h.Quantiles.Median()-gs[i].NoChange) > 1e-3 {
			t.Errorf("hub row %s headlines %g, no change is %g", h.Location, h.Quantiles.Median(), gs[i].NoChange)
		}
	}
	if strings.Contains(hub.String(), "method") {
		t.Error("the hub file has a column beyond the hubverse ones")
	}
}

// Forecasts the LHA issued count as origins once their outcomes are in
// the file; the file round-trips and a repeated week replaces the old row.
func TestIssuedForecasts(t *testing.T) {
	st := guardStudy()
	d := &series.Dataset{Regions: []*series.Region{linear("a", 60)}}
	day := func(i int) time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i) }
	rows := []Issued{
		{Area: "a", InputEnd: day(40), Model: 500, NoChange: 480}, // outcome on day 47: known
		{Area: "a", InputEnd: day(55), Model: 1, NoChange: 2},     // outcome on day 62: not yet
		{Area: "b", InputEnd: day(40), Model: 1, NoChange: 2},     // no such area
	}
	os := IssuedOrigins(st, d, rows)
	if len(os) != 1 || os[0].Actual != 100+10*47 || os[0].Model != 500 {
		t.Fatalf("origins %+v", os)
	}
	var b strings.Builder
	all := MergeIssued(rows, []Issued{{Area: "a", InputEnd: day(40), Model: 7, NoChange: 8}})
	if len(all) != 3 || all[0].Model != 7 {
		t.Fatalf("merged %+v", all)
	}
	if err := WriteIssued(&b, all); err != nil {
		t.Fatal(err)
	}
	back, err := ReadIssued(strings.NewReader(b.String()), "issued.csv")
	if err != nil || len(back) != 3 || back[0] != all[0] || !back[1].InputEnd.Equal(day(55)) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if _, err := ReadIssued(strings.NewReader("location,input_end,model,no_change\na,2024-13-01,1,2\n"), "issued.csv"); err == nil || !strings.Contains(err.Error(), "issued.csv line 2") {
		t.Errorf("bad date: %v", err)
	}
}
