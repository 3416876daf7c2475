package ui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

func weeklyFixture(t *testing.T) (protocol.Study, *series.Dataset, []byte) {
	t.Helper()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var regions []*series.Region
	for _, name := range []string{"a", "b"} {
		c := make([]float64, 400)
		for i := range c {
			c[i] = 100 + float64(i%30)
		}
		regions = append(regions, &series.Region{Name: name, Start: start, Cases: c})
	}
	d := &series.Dataset{Regions: regions}
	pub, err := forecast.NewPublicInputs(d, map[string]string{"a": "Bayern", "b": "Bayern"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := forecast.WritePublicFile(&b, pub); err != nil {
		t.Fatal(err)
	}
	decl, err := protocol.DeclareFile(protocol.PublicTotals, "test totals", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w := *model.WeeklyDesign.Weekly
	layers := []int{w.Inputs(), 4, 1}
	st := protocol.Study{Layers: layers, Params: nn.NewMLP(layers...).NumParams(),
		PublicInputs: []protocol.PublicInput{decl},
		Settings: protocol.Settings{Hidden: []int{4}, Features: string(model.WeeklyTotal), Weekly: &w, History: w.Inputs(), Horizon: 7, Smoothing: "trailing",
			Damping: 1, LocalEpochs: 1, LearningRate: 0.001}}
	return st, d, b.Bytes()
}

// The page downloads a weekly study's public file by its hash, checks it,
// trains on the weekly windows and forecasts with it; a copy with other
// bytes, or an area the file does not list, is a problem in plain words.
func TestWeeklyStudyOnThePage(t *testing.T) {
	st, d, file := weeklyFixture(t)
	var asked []string
	serve := file
	s := &JoinState{Link: "http://coord.example:8080/join#TOKEN", Welcome: &protocol.Welcome{Study: st}, Data: d,
		Fetch: func(_ context.Context, url, _ string) (int, []byte, error) {
			asked = append(asked, url)
			return 200, serve, nil
		}}
	s.checkStudy()
	if s.DataProblem != nil || s.prepared == nil || s.Windows == 0 || s.public == nil {
		t.Fatalf("problem %+v, %d windows", s.DataProblem, s.Windows)
	}
	if len(asked) != 1 || asked[0] != "http://coord.example:8080/api/public/"+st.PublicInputs[0].SHA256 {
		t.Errorf("fetched %v", asked)
	}
	params := make([]float64, st.Params)
	s.Forecasting = true
	s.forecast(params)
	if len(s.Forecasts) != 2 || s.Hub == "" || s.Forecasting {
		t.Fatalf("%d forecasts, hub %q, note %q", len(s.Forecasts), s.Hub, s.MetricsNote)
	}
	if f := s.Forecasts[0]; !f.Target.Equal(d.Regions[0].End().AddDate(0, 0, 7)) || !(f.Value > 0) {
		t.Errorf("forecast %+v", f)
	}

	serve = append(append([]byte(nil), file...), '\n')
	s.Data, s.prepared, s.public = d, nil, nil
	s.checkStudy()
	if p := s.DataProblem; p == nil || !strings.Contains(p.Title, "public inputs") || !strings.Contains(p.Detail, "declares") {
		t.Errorf("another file: %+v", p)
	}
	serve = file
	s.DataProblem = nil
	s.Data = &series.Dataset{Regions: append([]*series.Region{{Name: "z", Start: d.Regions[0].Start, Cases: d.Regions[0].Cases}}, d.Regions...)}
	s.checkStudy()
	// What the file holds: the LHA can still join, present only.
	if p := s.Unusable; p == nil || s.DataProblem != nil || s.Data == nil || !strings.Contains(p.Title, "not in the study's public inputs") || !strings.Contains(p.Detail, `"z"`) {
		t.Errorf("an unlisted area: %+v (problem %+v)", p, s.DataProblem)
	}
}
