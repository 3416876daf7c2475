package session

import (
	"errors"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

func weeklyStudy() protocol.Study {
	w := *model.WeeklyDesign.Weekly
	layers := []int{w.Inputs(), 8, 1}
	return protocol.Study{Layers: layers, Params: nn.NewMLP(layers...).NumParams(),
		Settings: protocol.Settings{Hidden: []int{8}, Features: string(model.WeeklyTotal), Weekly: &w, History: w.Inputs(), Horizon: 7, Smoothing: "trailing",
			Damping: 1}}
}

func weeklyData(t *testing.T) (*series.Dataset, *forecast.PublicInputs) {
	t.Helper()
	d := &series.Dataset{Regions: []*series.Region{linear("a", 400), linear("b", 400)}}
	pub, err := forecast.NewPublicInputs(d, map[string]string{"a": "Bayern", "b": "Bayern"}, map[string]float64{"a": 1e5, "b": 2e5})
	if err != nil {
		t.Fatal(err)
	}
	pub.RequireAreas = true
	return d, pub
}

func TestPrepareWeekly(t *testing.T) {
	st := weeklyStudy()
	d, pub := weeklyData(t)
	if _, err := PrepareWeekly(st, d, nil, 0); !errors.Is(err, ErrNoPublic) {
		t.Errorf("without public inputs: %v", err)
	}
	all, err := PrepareWeekly(st, d, pub, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 52 weeks of origins every 2 days, 2 areas.
	if all.Total() < 2*170 || all.Capped() {
		t.Fatalf("%d windows, capped %v", all.Total(), all.Capped())
	}
	x, y, err := all.Round()
	if err != nil || len(y) != all.Total() || len(x) != len(y)*st.Layers[0] {
		t.Fatalf("round: %d windows, %d inputs, %v", len(y), len(x), err)
	}
	capped, err := PrepareWeekly(st, d, pub, 50)
	if err != nil {
		t.Fatal(err)
	}
	x1, y1, _ := capped.Round()
	x2, _, _ := capped.Round()
	if !capped.Capped() || len(y1) != 50 || len(x1) != 50*st.Layers[0] || slicesEqual(x1, x2) {
		t.Errorf("capped: %d windows a round, two rounds the same sample: %v", len(y1), slicesEqual(x1, x2))
	}
	d.Regions = append(d.Regions, linear("c", 400))
	if _, err := PrepareWeekly(st, d, pub, 0); !errors.Is(err, forecast.ErrAreaNotPublic) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("an area the public file does not list: %v", err)
	}
	if _, err := PrepareWeekly(guardStudy(), d, pub, 0); !errors.Is(err, ErrBadStudy) {
		t.Errorf("a one-month study: %v", err)
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The public file is cut to the LHA's last day: totals published later
// change nothing.
func TestWeeklyForecastsReadNoLaterTotals(t *testing.T) {
	st := weeklyStudy()
	d, pub := weeklyData(t)
	m := nn.NewMLP(st.Layers...)
	w := make([]float64, m.NumParams())
	for i := range w {
		w[i] = 0.05 * float64(i%7-3)
	}
	short := &series.Dataset{Regions: []*series.Region{{Name: "a", Start: d.Regions[0].Start, Cases: d.Regions[0].Cases[:300]}}}
	before, err := WeeklyForecasts(st, short, pub, w)
	if err != nil {
		t.Fatal(err)
	}
	later := *pub
	later.National = append([]float64(nil), pub.National...)
	for i := 300; i < len(later.National); i++ {
		later.National[i] *= 5
	}
	after, err := WeeklyForecasts(st, short, &later, w)
	if err != nil {
		t.Fatal(err)
	}
	if before[0].Point != after[0].Point || !before[0].Target.Equal(short.Regions[0].End().AddDate(0, 0, 7)) {
		t.Errorf("forecast %v then %v", before[0], after[0])
	}
	earlier := *pub
	earlier.National = append([]float64(nil), pub.National...)
	for i := 280; i < 300; i++ {
		earlier.National[i] *= 5
	}
	changed, err := WeeklyForecasts(st, short, &earlier, w)
	if err != nil {
		t.Fatal(err)
	}
	if changed[0].Point == before[0].Point {
		t.Error("the national totals before the LHA's last day do not change its forecast")
	}
	gs, err := WeeklyGuarded(st, short, pub, w, nil)
	if err != nil || len(gs) != 1 || gs[0].Method != forecast.MethodNoChange {
		t.Errorf("guarded without issued weeks: %+v, %v", gs, err)
	}
}

// In a continuing weekly study the file read again at a campaign's start
// gives the weekly windows as of its new last day, with the public inputs.
func TestWeeklyRefresh(t *testing.T) {
	st := weeklyStudy()
	st.Rounds, st.Campaigns = 4, 2
	d, pub := weeklyData(t)
	short := &series.Dataset{Regions: []*series.Region{{Name: "a", Start: d.Regions[0].Start, Cases: d.Regions[0].Cases[:200]}}}
	s := &Session{study: st, opt: Options{Public: pub, Refresh: func(int) (*series.Dataset, error) { return d, nil }}}
	old, err := s.prepare(short)
	if err != nil {
		t.Fatal(err)
	}
	cur := old
	got := s.refresh(3, &cur)
	if got == old || got.Total() <= old.Total() || got.history != st.Layers[0] {
		t.Errorf("campaign 2 trains on %d windows of %d inputs, campaign 1 on %d", got.Total(), got.history, old.Total())
	}
	s.opt.Public = nil
	if _, err := s.prepare(short); !errors.Is(err, ErrNoPublic) {
		t.Errorf("without the public inputs: %v", err)
	}
}
