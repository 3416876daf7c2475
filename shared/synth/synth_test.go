package synth

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

func generate(t *testing.T, o Options) (*series.Dataset, []Area) {
	t.Helper()
	d, areas, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return d, areas
}

func TestGenerateDeterministic(t *testing.T) {
	d1, a1 := generate(t, Options{Seed: 42})
	d2, a2 := generate(t, Options{Seed: 42})
	if !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(a1, a2) {
		t.Fatal("same seed gave different output")
	}
	d3, _ := generate(t, Options{Seed: 43})
	if reflect.DeepEqual(d1, d3) {
		t.Fatal("different seeds gave the same output")
	}
}

func TestGenerateSanity(t *testing.T) {
	o := DefaultOptions()
	for _, seed := range []uint64{0, 1, 2} {
		o.Seed = seed
		d, areas := generate(t, o)
		if len(d.Regions) != 60 || len(areas) != 60 {
			t.Fatalf("%d regions, %d areas, want 60", len(d.Regions), len(areas))
		}
		for i, r := range d.Regions {
			a := areas[i]
			if r.Name != a.ID || a.ID != fmt.Sprintf("S%03d", i+1) {
				t.Fatalf("region %d: name %q, id %q", i, r.Name, a.ID)
			}
			if !r.Start.Equal(time.Date(2020, 10, 1, 0, 0, 0, 0, time.UTC)) || len(r.Cases) != 92 {
				t.Fatalf("%s: %v, %d days", r.Name, r.Start, len(r.Cases))
			}
			if a.Population < 20000 || a.Population > 3e6 || a.Population != math.Trunc(a.Population) {
				t.Errorf("%s: population %v", a.ID, a.Population)
			}
			total := 0.0
			for _, v := range r.Cases {
				if v < 0 || v != math.Trunc(v) || math.IsNaN(v) {
					t.Fatalf("%s: count %v", r.Name, v)
				}
				total += v
			}
			if total > a.Population || total == 0 {
				t.Errorf("%s: %v cases in a population of %v", a.ID, total, a.Population)
			}
		}
		if d.Region("S001") == nil {
			t.Errorf("dataset not sorted by name")
		}
	}
}

// weekdayMeans pools all areas' counts by weekday.
func weekdayMeans(d *series.Dataset) [7]float64 {
	var sum, n [7]float64
	for _, r := range d.Regions {
		for i, v := range r.Cases {
			wd := r.Date(i).Weekday()
			sum[wd] += v
			n[wd]++
		}
	}
	var m [7]float64
	for i := range m {
		m[i] = sum[i] / n[i]
	}
	return m
}

func TestWeekdayEffect(t *testing.T) {
	d, _ := generate(t, Options{Seed: 7})
	m := weekdayMeans(d)
	midweek := (m[time.Tuesday] + m[time.Wednesday] + m[time.Thursday] + m[time.Friday]) / 4
	weekdays := (m[time.Monday] + 4*midweek) / 5
	// Expected Sunday ≈ 0.5 × weekdays; the margin keeps the test robust.
	if m[time.Sunday] > 0.8*weekdays {
		t.Errorf("Sunday mean %.1f not clearly below the weekday mean %.1f", m[time.Sunday], weekdays)
	}
	if m[time.Monday] <= midweek {
		t.Errorf("no Monday catch-up: Monday %.1f, Tuesday–Friday %.1f", m[time.Monday], midweek)
	}
	// Without weekday effects the dip disappears.
	flat, _ := generate(t, Options{Seed: 7, WeekdayReporting: [7]float64{1, 1, 1, 1, 1, 1, 1}})
	fm := weekdayMeans(flat)
	if fm[time.Sunday] < 0.8*fm[time.Wednesday] {
		t.Errorf("flat reporting still has a Sunday dip: %.1f vs %.1f", fm[time.Sunday], fm[time.Wednesday])
	}
}

func TestLargerAreasMoreCases(t *testing.T) {
	d, areas := generate(t, Options{Seed: 11})
	idx := make([]int, len(areas))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return areas[idx[i]].Population < areas[idx[j]].Population })
	total := func(i int) float64 {
		s := 0.0
		for _, v := range d.Regions[i].Cases {
			s += v
		}
		return s
	}
	half := len(idx) / 2
	small, large := 0.0, 0.0
	for k, i := range idx {
		if k < half {
			small += total(i)
		} else {
			large += total(i)
		}
	}
	if large < 2*small {
		t.Errorf("larger half has %v cases, smaller half %v", large, small)
	}
	if p0, p1 := areas[idx[0]].Population, areas[idx[len(idx)-1]].Population; p1 < 10*p0 {
		t.Errorf("populations not heavy-tailed: %v … %v", p0, p1)
	}
}

func TestZeroDaysInSmallAreas(t *testing.T) {
	d, areas := generate(t, Options{Seed: 5})
	zeros, days := 0, 0
	for i, a := range areas {
		if a.Population < 100000 {
			for _, v := range d.Regions[i].Cases {
				days++
				if v == 0 {
					zeros++
				}
			}
		}
	}
	if days == 0 || zeros == 0 || zeros > days/4 {
		t.Errorf("%d zero days of %d in small areas; want occasional ones", zeros, days)
	}
}

func TestInterventionDampsTheWave(t *testing.T) {
	d, _ := generate(t, Options{Seed: 3})
	free, _ := generate(t, Options{Seed: 3, NoIntervention: true})
	nat := national(d)
	if nat[91] > 0.8*maxOf(nat) {
		t.Errorf("no decline after the intervention: last %v, peak %v", nat[91], maxOf(nat))
	}
	if p := argmax(nat); p < 20 || p > 80 {
		t.Errorf("national peak on day %d, want a wave inside the period", p)
	}
	if sum(national(free)) < 1.5*sum(nat) {
		t.Errorf("without intervention %v cases, with %v", sum(national(free)), sum(nat))
	}
}

func national(d *series.Dataset) []float64 {
	raw := make([]float64, len(d.Regions[0].Cases))
	for _, r := range d.Regions {
		for i, v := range r.Cases {
			raw[i] += v
		}
	}
	sm := make([]float64, len(raw))
	series.MovingAverage7(sm, raw, series.Centered)
	for i := range sm {
		if math.IsNaN(sm[i]) {
			sm[i] = 0
		}
	}
	return sm
}

func sum(x []float64) (s float64) {
	for _, v := range x {
		s += v
	}
	return s
}

func maxOf(x []float64) float64 { return x[argmax(x)] }

func argmax(x []float64) int {
	k := 0
	for i := range x {
		if x[i] > x[k] {
			k = i
		}
	}
	return k
}

// TestLearnable checks that the smoothed series carry signal: the naive
// forecast "the value P = 7 days later equals the last input" has a
// pooled R² above 0.5 over all windows.
func TestLearnable(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		d, _ := generate(t, Options{Seed: seed})
		areas, err := series.MakeWindows(d, series.WindowOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ys, preds []float64
		for _, a := range areas {
			for _, w := range a.Windows {
				ys = append(ys, w.Y)
				preds = append(preds, w.X[len(w.X)-1])
			}
		}
		mean := sum(ys) / float64(len(ys))
		sse, sst := 0.0, 0.0
		for i, y := range ys {
			sse += (y - preds[i]) * (y - preds[i])
			sst += (y - mean) * (y - mean)
		}
		r2 := 1 - sse/sst
		t.Logf("seed %d: naive R² = %.3f over %d windows", seed, r2, len(ys))
		if r2 <= 0.5 {
			t.Errorf("seed %d: naive R² = %.3f over %d windows, want > 0.5", seed, r2, len(ys))
		}
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, o := range []Options{
		{Areas: -1},
		{Days: -5},
		{Days: series.MaxSpanDays + 1},
		{R0: math.NaN()},
		{R0: -1},
		{Coupling: 1.5},
		{ReportingRate: 2},
		{InterventionEffect: math.Inf(1)},
		{IncubationDays: 0.1},
		{WeekdayReporting: [7]float64{1, 1, 1, 0, 1, 1, 1}},
		{MinPopulation: 5e5, MaxPopulation: 1e5},
		{BurnIn: -1},
		{MissedDayRate: 0.9},
		{TimingSpread: -1},
		{DetectionDrift: math.NaN()},
		{DetectionTrend: 0.5},
		{ReportingNoise: 4},
	} {
		if _, _, err := Generate(o); !errors.Is(err, ErrOption) {
			t.Errorf("%+v: got %v, want ErrOption", o, err)
		}
	}
}

func TestOptionsShapes(t *testing.T) {
	d, areas := generate(t, Options{Areas: 1200, Days: 10, Start: time.Date(2022, 3, 1, 15, 0, 0, 0, time.UTC), PopulationSigma: 0.01})
	if len(d.Regions) != 1200 || areas[0].ID != "S0001" || areas[1199].ID != "S1200" || !d.Regions[0].Start.Equal(time.Date(2022, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("shape: %d regions, ids %s … %s, start %v", len(d.Regions), areas[0].ID, areas[1199].ID, d.Regions[0].Start)
	}
	if !strings.HasSuffix(areas[1199].Name, " 6") {
		t.Errorf("names beyond the 200 combinations not disambiguated: %q", areas[1199].Name)
	}
	names := map[string]bool{}
	for _, a := range areas {
		if names[a.Name] {
			t.Fatalf("duplicate name %q", a.Name)
		}
		names[a.Name] = true
	}
}

func TestRoundTripThroughSeries(t *testing.T) {
	d, areas := generate(t, Options{Seed: 9, Areas: 12})
	var buf bytes.Buffer
	if err := series.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	back, err := series.Parse(&buf, "synth.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Write writes every day, zero days included, so Parse gives the
	// same regions back, read as daily counts without warnings.
	if !reflect.DeepEqual(back.Regions, d.Regions) {
		t.Errorf("series round trip changed the dataset")
	}
	if back.Columns.CasesAre != series.CasesDaily || len(back.Warnings()) != 0 {
		t.Errorf("synthetic data read as %q with warnings %v", back.Columns.CasesAre, back.Warnings())
	}

	buf.Reset()
	if err := WritePopulations(&buf, areas); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "county_id,name,state,population\nS001,") {
		t.Errorf("population file starts %q", buf.String()[:40])
	}
	pop, err := series.ParsePopulations(&buf, "populations.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range areas {
		if pop[a.ID] != a.Population {
			t.Errorf("%s: population %v read back as %v", a.ID, a.Population, pop[a.ID])
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{60, 400} {
		b.Run(fmt.Sprintf("areas=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Generate(Options{Areas: n}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The realism switches change the data when on, and draw nothing when off:
// the same seed without them gives, bit for bit, the data it gave before
// they existed (the hash below was computed with that earlier code).
func TestRealismSwitches(t *testing.T) {
	pinned, _ := generate(t, Options{Areas: 50, Seed: 5})
	h := fnv.New64()
	for _, r := range pinned.Regions {
		fmt.Fprint(h, r.Cases)
	}
	if got := h.Sum64(); got != 1288767077805498505 {
		t.Errorf("default output changed: hash %d", got)
	}
	base, _ := generate(t, Options{Areas: 30, Seed: 9})
	total := func(d *series.Dataset) float64 {
		s := 0.0
		for _, r := range d.Regions {
			for _, v := range r.Cases {
				s += v
			}
		}
		return s
	}
	for _, o := range []Options{{TimingSpread: 7}, {DetectionDrift: 0.05}, {ReportingNoise: 0.8}, {DetectionTrend: -0.02}} {
		o.Areas, o.Seed = 30, 9
		d, _ := generate(t, o)
		if reflect.DeepEqual(d, base) {
			t.Errorf("%+v: same data as without the switch", o)
		}
		for _, r := range d.Regions {
			for i, v := range r.Cases {
				if v < 0 || v != math.Trunc(v) || math.IsNaN(v) {
					t.Fatalf("%+v: %s day %d: %v cases", o, r.Name, i, v)
				}
			}
		}
	}
	// Testing that winds down reports fewer cases.
	down, _ := generate(t, Options{Areas: 30, Seed: 9, DetectionTrend: -0.02})
	if !(total(down) < 0.8*total(base)) {
		t.Errorf("detection trend −0.02/day: %v cases, without %v", total(down), total(base))
	}
}
