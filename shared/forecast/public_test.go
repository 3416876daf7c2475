package forecast

import (
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

func TestPublicInputs(t *testing.T) {
	d0 := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &series.Dataset{Regions: []*series.Region{
		{Name: "01001", Start: d0, Cases: []float64{1, 2, 3, 4}},
		{Name: "01002", Start: d0.AddDate(0, 0, 1), Cases: []float64{10, 20, 30}},
		{Name: "09001", Start: d0, Cases: []float64{100, 100, 100, 100}},
		{Name: "99999", Start: d0, Cases: []float64{1000, 0, 0, 0}}, // no state: national only
	}}
	p, err := NewPublicInputs(d, map[string]string{"01001": "Nord", "01002": "Nord", "09001": "Süd"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1101, 112, 123, 134}
	for i, v := range want {
		if p.National[i] != v {
			t.Errorf("national day %d: %v, want %v", i, p.National[i], v)
		}
	}
	if n := p.States["Nord"]; n[0] != 1 || n[1] != 12 || n[3] != 34 || p.States["Süd"][2] != 100 {
		t.Errorf("states %v", p.States)
	}
	u := p.Until(d0.AddDate(0, 0, 1))
	if len(u.National) != 2 || len(u.States["Nord"]) != 2 || !u.Known.Equal(d0.AddDate(0, 0, 1)) || len(p.National) != 4 {
		t.Errorf("Until: %v %v known %s (the original kept %d days)", u.National, u.States, u.Known, len(p.National))
	}
	if cap(u.National) != 2 {
		t.Error("Until leaves later days reachable by reslicing")
	}
	if u.StateRegion("Nord").Cases[1] != 12 || u.StateRegion("West") != nil || u.NationalRegion().Name != "national" || u.StateOf("09001") != "Süd" {
		t.Error("regions")
	}
	if _, err := NewPublicInputs(&series.Dataset{}, nil, nil); err == nil {
		t.Error("no areas accepted")
	}
}
