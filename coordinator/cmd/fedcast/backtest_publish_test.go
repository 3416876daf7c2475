package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/backtest"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/publish"
)

// TestBacktestPublishCommand runs `fedcast backtest --preset lipschitz
// --publish-epsilon 1 --json --hub DIR` end to end: the JSON's
// "published" object has the contract's fields (ε per person per year
// just below 1), the top-level figures stay the unpublished forecasts',
// and DIR/published holds a hub file for every file of DIR, with the
// same areas, dates and rows, and the DP marking beside them.
func TestBacktestPublishCommand(t *testing.T) {
	cases, counties := backtestFiles(t)
	dir := t.TempDir()
	hub, js := filepath.Join(dir, "hub"), filepath.Join(dir, "bt.json")
	code, stdout, stderr := fedcast(t, "backtest", "--cases", cases, "--counties", counties, "--from", "2020-08-03",
		"--to", "2020-09-21", "--epsilon", "2", "--seed", "4", "--preset", "lipschitz", "--publish-epsilon", "1",
		"--hub", hub, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "published (ε 1 per person per year") || !strings.Contains(stderr, "published files into "+filepath.Join(hub, "published")) {
		t.Errorf("stdout %q\nstderr %q", stdout, stderr)
	}
	var v struct {
		RelativeWIS float64        `json:"relative_wis"`
		Published   map[string]any `json:"published"`
	}
	if err := json.Unmarshal(must2(os.ReadFile(js)), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"epsilon_per_person_year", "relative_wis", "relative_mae", "coverage_95"} {
		if x, ok := v.Published[k].(float64); !ok || !(x > 0) {
			t.Errorf("published.%s = %v, want a number above 0", k, v.Published[k])
		}
	}
	if e, _ := v.Published["epsilon_per_person_year"].(float64); e > 1 || e < 0.95 {
		t.Errorf("published.epsilon_per_person_year %v, want just below 1", e)
	}
	if v.Published["relative_wis"] == v.RelativeWIS {
		t.Errorf("the top-level relative_wis %v is the published one: it must stay the unpublished forecasts'", v.RelativeWIS)
	}
	plain, _ := filepath.Glob(filepath.Join(hub, "*.csv"))
	pub, _ := filepath.Glob(filepath.Join(hub, "published", "*.csv"))
	if len(plain) != 8 || len(pub) != len(plain) {
		t.Fatalf("%d hub files, %d published ones, want 8 and 8", len(plain), len(pub))
	}
	differ := 0
	for _, f := range plain {
		ta, a := readHubFile(t, f)
		tb, b := readHubFile(t, filepath.Join(hub, "published", filepath.Base(f)))
		if !ta.Equal(tb) || len(a) != 4 || len(b) != len(a) {
			t.Fatalf("%s: origin %v with %d areas, published %v with %d", filepath.Base(f), ta, len(a), tb, len(b))
		}
		for area, q := range a {
			p, ok := b[area]
			if !ok || !p.Valid() {
				t.Errorf("%s: area %s published as %v", filepath.Base(f), area, p)
			}
			if p != q {
				differ++
			}
		}
		if n, m := strings.Count(string(must2(os.ReadFile(f))), "\n"), strings.Count(string(must2(os.ReadFile(filepath.Join(hub, "published", filepath.Base(f))))), "\n"); n != m {
			t.Errorf("%s: %d lines, published %d", filepath.Base(f), n, m)
		}
	}
	if differ == 0 {
		t.Error("every published forecast equals the unpublished one: no noise")
	}
	var mark publish.Marking
	if err := json.Unmarshal(must2(os.ReadFile(filepath.Join(hub, "published", "dp.json"))), &mark); err != nil ||
		!mark.DP || mark.EpsilonPerPersonYear > 1 || mark.EpsilonPerPersonYear < 0.95 || mark.Covers == "" {
		t.Errorf("published/dp.json: %+v (%v)", mark, err)
	}
}

// readHubFile reads one of the backtest's weekly hub files.
func readHubFile(t *testing.T, path string) (time.Time, map[string]forecast.Quantiles) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	origin, qs, err := backtest.ReadHubFile(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return origin, qs
}
