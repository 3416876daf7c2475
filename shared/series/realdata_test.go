package series

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/testkit"
)

// TestRealCounty parses the team kit's county file: 400 counties, each
// with 181 reported days in two periods (2020-10-01 … 2020-12-31 and
// 2022-02-01 … 2022-04-30) and the 396 days between them as zeros.
func TestRealCounty(t *testing.T) {
	dir := testkit.DataDir(t)
	path := filepath.Join(dir, "county_cases_daily.csv")
	d, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Regions) != 400 {
		t.Fatalf("%d regions, want 400", len(d.Regions))
	}
	first, last := d.Span()
	if !first.Equal(day("2020-10-01")) || !last.Equal(day("2022-04-30")) {
		t.Errorf("span %v … %v", first, last)
	}
	for _, r := range d.Regions {
		if len(r.Name) != 5 || !r.Start.Equal(first) || !r.End().Equal(last) {
			t.Fatalf("region %q: %v … %v", r.Name, r.Start, r.End())
		}
		for i := r.Index(day("2021-01-01")); i <= r.Index(day("2022-01-31")); i++ {
			if r.Cases[i] != 0 {
				t.Fatalf("region %q: gap day %v = %v, want 0", r.Name, r.Date(i), r.Cases[i])
			}
		}
	}
	if d.Region("01001") == nil || d.Region("11000") == nil {
		t.Errorf("leading-zero id 01001 or merged Berlin 11000 missing")
	}

	for _, study := range []struct {
		from, to string
		n        int
	}{
		{"2020-11-01", "2020-12-01", 14},
		{"2022-03-01", "2022-04-01", 15},
	} {
		areas, err := MakeWindows(d, WindowOptions{From: day(study.from), To: day(study.to)})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range areas {
			if len(a.Windows) != study.n {
				t.Fatalf("%s %s: %d windows, want %d", study.from, a.Region, len(a.Windows), study.n)
			}
		}
		train, test := SplitAreas(areas, Temporal, 0, nil)
		x, y := Stack(train)
		_, yt := Stack(test)
		if len(y) != 400*(study.n-2) || len(x) != 10*len(y) || len(yt) != 800 {
			t.Errorf("%s: %d training and %d test windows", study.from, len(y), len(yt))
		}
	}

	// Pin Flensburg's (01001) first November window against the raw rows.
	raw := readRawCounty(t, path, "01001")
	mean7 := func(center string) float64 {
		c := day(center)
		sum := 0.0
		for o := -3; o <= 3; o++ {
			v, ok := raw[c.AddDate(0, 0, o).Format(time.DateOnly)]
			if !ok {
				t.Fatalf("raw row for %v missing", c.AddDate(0, 0, o))
			}
			sum += v
		}
		return sum / 7
	}
	areas, err := MakeWindows(&Dataset{Regions: []*Region{d.Region("01001")}},
		WindowOptions{From: day("2020-11-01"), To: day("2020-12-01")})
	if err != nil {
		t.Fatal(err)
	}
	w := areas[0].Windows[0]
	if !w.InputEnd.Equal(day("2020-11-11")) || !w.Target.Equal(day("2020-11-18")) {
		t.Errorf("first window %v → %v, want 2020-11-11 → 2020-11-18", w.InputEnd, w.Target)
	}
	for j := range 10 {
		c := day("2020-11-02").AddDate(0, 0, j).Format(time.DateOnly)
		if got, want := w.X[j], mean7(c); math.Abs(got-want) > 1e-12 {
			t.Errorf("X[%d] (%s) = %v, want %v", j, c, got, want)
		}
	}
	// By hand from the rows: 10-30..11-05 are 8 9 0 3 4 2 6; 11-08..11-14
	// are 3 3 2 8 8 8 1; 11-15..11-21 are 2 0 1 6 6 5 3.
	const tol = 1e-12
	if math.Abs(w.X[0]-32.0/7) > tol || math.Abs(w.X[9]-33.0/7) > tol || math.Abs(w.Y-23.0/7) > tol {
		t.Errorf("X[0] = %v, X[9] = %v, Y = %v; want 32/7, 33/7, 23/7", w.X[0], w.X[9], w.Y)
	}

	// Live input as of the last day of the first period.
	x, end, target, err := LatestInput(d.Region("01001"), WindowOptions{To: day("2020-12-31")})
	if err != nil || !end.Equal(day("2020-12-28")) || !target.Equal(day("2021-01-04")) ||
		math.Abs(x[9]-mean7("2020-12-28")) > tol {
		t.Errorf("LatestInput = %v ending %v for %v, %v", x, end, target, err)
	}
}

func TestRealPopulations(t *testing.T) {
	dir := testkit.DataDir(t)
	f, err := os.Open(filepath.Join(dir, "counties.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pop, err := ParsePopulations(f, "counties.csv")
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, p := range pop {
		total += p
	}
	// The data README gives 400 counties and 83,237,124 inhabitants.
	if len(pop) != 400 || total != 83237124 || pop["11000"] != 3677472 {
		t.Errorf("%d counties, total %v, Berlin %v", len(pop), total, pop["11000"])
	}
}

// readRawCounty reads one county's rows with encoding/csv, independently
// of Parse.
func readRawCounty(t *testing.T, path, id string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, r := range recs[1:] {
		if r[1] == id {
			v, err := strconv.ParseFloat(r[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			out[r[0]] = v
		}
	}
	return out
}

func BenchmarkParseReal(b *testing.B) {
	dir := testkit.DataDir(b)
	data, err := os.ReadFile(filepath.Join(dir, "county_cases_daily.csv"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytesReader(data), "county_cases_daily.csv"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMakeWindowsReal(b *testing.B) {
	dir := testkit.DataDir(b)
	d, err := ReadFile(filepath.Join(dir, "county_cases_daily.csv"))
	if err != nil {
		b.Fatal(err)
	}
	opt := WindowOptions{From: day("2020-11-01"), To: day("2020-12-01")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MakeWindows(d, opt); err != nil {
			b.Fatal(err)
		}
	}
}
