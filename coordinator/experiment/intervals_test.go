package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/forecast"
)

func TestRunIntervals(t *testing.T) {
	for _, point := range []string{PointPersistence, PointModel} {
		cfg := synthConfig(t)
		cfg.PointForecast = point
		cfg.Epsilons = []float64{1, math.Inf(1)}
		cfg.Runs = 2
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			d := r.Intervals
			if d == nil {
				t.Fatalf("%s: no interval detail", point)
			}
			for name, s := range map[string]float64{"coverage_50": r.Coverage50.Mean, "coverage_95": r.Coverage95.Mean} {
				if !(s >= 0 && s <= 1) {
					t.Errorf("%s ε=%v: %s = %v", point, r.Epsilon, name, s)
				}
			}
			if !(r.WIS.Mean > 0) || !(r.RelativeWIS.Mean > 0) || math.IsInf(r.RelativeWIS.Mean, 0) {
				t.Errorf("%s ε=%v: WIS %v, relative %v", point, r.Epsilon, r.WIS, r.RelativeWIS)
			}
			if r.Coverage95.Mean < r.Coverage50.Mean {
				t.Errorf("%s: 95 %% coverage %v below 50 %% coverage %v", point, r.Coverage95.Mean, r.Coverage50.Mean)
			}
			// Every test window of a run is scored; one run's forecasts
			// are kept for the hub file.
			if d.ForecastsPerRun != r.TestWindows || d.Coverage95Pooled.N != r.TestWindows || len(r.Hub) != r.TestWindows {
				t.Errorf("%s: %d forecasts per run, pooled n %d, %d hub forecasts; %d test windows",
					point, d.ForecastsPerRun, d.Coverage95Pooled.N, len(r.Hub), r.TestWindows)
			}
			if len(d.ByTargetDate) == 0 || d.Rolling == nil || d.Rolling.ForecastsPerRun <= d.ForecastsPerRun {
				t.Errorf("%s: by date %v, rolling %+v", point, d.ByTargetDate, d.Rolling)
			}
			var pit float64
			for _, v := range d.PIT {
				pit += v
			}
			if len(d.PIT) != forecast.PITBins || math.Abs(pit-1) > 1e-9 {
				t.Errorf("%s: PIT %v", point, d.PIT)
			}
		}
		// Persistence needs no training: every ε gives the same scores.
		if point == PointPersistence && rep.Results[0].WIS != rep.Results[1].WIS {
			t.Errorf("persistence: WIS differs across ε: %v vs %v", rep.Results[0].WIS, rep.Results[1].WIS)
		}
		var buf bytes.Buffer
		if err := rep.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Config struct {
				Point string `json:"point_forecast"`
			} `json:"config"`
			Results []map[string]json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if v.Config.Point != point {
			t.Errorf("config point_forecast %q", v.Config.Point)
		}
		for _, k := range []string{"metrics", "wis", "relative_wis", "coverage_50", "coverage_95"} {
			var s struct {
				Mean *float64 `json:"mean"`
				SD   *float64 `json:"sd"`
			}
			if k == "metrics" {
				continue
			}
			if err := json.Unmarshal(v.Results[0][k], &s); err != nil || s.Mean == nil || s.SD == nil {
				t.Errorf("JSON %q = %s (%v)", k, v.Results[0][k], err)
			}
		}
		if point != PointPersistence {
			continue
		}
		dir := t.TempDir()
		files, err := rep.WriteHub(dir)
		if err != nil || len(files) != 2 {
			t.Fatalf("hub files %v: %v", files, err)
		}
		f, err := os.Open(filepath.Join(dir, "fedcast-eps-1.csv"))
		if err != nil {
			t.Fatal(err)
		}
		fs, err := forecast.ReadHub(f)
		f.Close()
		if err != nil || len(fs) != rep.Results[0].TestWindows {
			t.Errorf("hub file: %d forecasts (%v)", len(fs), err)
		}
		figs, err := rep.SummaryFigures(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"interval_coverage.png", "relative_wis.svg", "pit_eps_1.png", "pit_eps_inf.svg"} {
			found := false
			for _, f := range figs {
				found = found || strings.HasSuffix(f, string(filepath.Separator)+want)
			}
			if !found {
				t.Errorf("figure %s not written (%v)", want, figs)
			}
		}
		var md bytes.Buffer
		if err := WriteMarkdown(&md, []string{"x.json"}, []*Report{rep}); err != nil || !strings.Contains(md.String(), "| relative WIS |") {
			t.Errorf("markdown lacks the interval table: %v\n%s", err, md.String())
		}
	}
}

// summarizeIntervals against hand-computed values.
func TestSummarizeIntervals(t *testing.T) {
	runs := []intervalRun{
		{n: 10, in50: 5, in95: 9, inS95: 8, wis: 20, baseWIS: 40, pit: [forecast.PITBins]int{1, 1, 1, 2, 2, 1, 1, 1}},
		{n: 10, in50: 3, in95: 10, inS95: 6, wis: 30, baseWIS: 30, pit: [forecast.PITBins]int{0, 2, 2, 2, 2, 1, 1, 0}},
	}
	var r Result
	summarizeIntervals(&r, runs)
	// Relative WIS per run: 0.5 and 1 → mean 0.75, sd √0.125.
	if math.Abs(r.RelativeWIS.Mean-0.75) > 1e-12 || math.Abs(r.RelativeWIS.SD-math.Sqrt(0.125)) > 1e-12 {
		t.Errorf("relative WIS %+v", r.RelativeWIS)
	}
	if r.WIS.Mean != 2.5 || r.Coverage50.Mean != 0.4 || r.Coverage95.Mean != 0.95 || r.Intervals.Coverage95InSample.Mean != 0.7 {
		t.Errorf("summary: WIS %v, c50 %v, c95 %v, in-sample %v", r.WIS, r.Coverage50, r.Coverage95, r.Intervals.Coverage95InSample)
	}
	// Per run: 19 of 20 over two runs → 9.5 → 10 of 10 (rounded half away from 0).
	c := r.Intervals.Coverage95Pooled
	lo, hi := forecast.Wilson(10, 10, 1.959963984540054)
	if c.Covered != 10 || c.N != 10 || c.Wilson != [2]float64{lo, hi} || c.Rate != 1 {
		t.Errorf("pooled %+v", c)
	}
	if r.Intervals.PIT[3] != 0.2 || r.Intervals.PIT[0] != 0.05 {
		t.Errorf("PIT %v", r.Intervals.PIT)
	}
}
