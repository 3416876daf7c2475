package forecast

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

func publicFixture(t *testing.T) *PublicInputs {
	t.Helper()
	start := time.Date(2020, 10, 1, 0, 0, 0, 0, time.UTC)
	d := &series.Dataset{Regions: []*series.Region{
		{Name: "09162", Start: start, Cases: []float64{1, 2, 3, 4}},
		{Name: "05315", Start: start, Cases: []float64{10, 20, 30, 40}},
	}}
	p, err := NewPublicInputs(d, map[string]string{"09162": "Bayern", "05315": "Nordrhein-Westfalen"},
		map[string]float64{"09162": 1484226, "05315": 1083498})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPublicFileRoundTrip(t *testing.T) {
	p := publicFixture(t)
	var b bytes.Buffer
	if err := WritePublicFile(&b, p); err != nil {
		t.Fatal(err)
	}
	q, err := ReadPublicFile(bytes.NewReader(b.Bytes()), "pub.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !q.Start.Equal(p.Start) || !q.Known.Equal(p.Known) || len(q.National) != 4 || q.National[3] != 44 {
		t.Fatalf("national %v from %v to %v", q.National, q.Start, q.Known)
	}
	if got := q.States["Bayern"]; len(got) != 4 || got[2] != 3 {
		t.Fatalf("Bayern %v", got)
	}
	a, err := q.Area("09162")
	if err != nil || a.Population != 1484226 || a.State == nil || a.State.Cases[3] != 4 || !a.Holidays.Known {
		t.Fatalf("area 09162: %+v, %v", a, err)
	}
	if _, err := q.Area("9162"); !errors.Is(err, ErrAreaNotPublic) || !strings.Contains(err.Error(), `"9162"`) {
		t.Fatalf("an area missing from the file: %v", err)
	}
	if _, err := p.Area("9162"); err != nil {
		t.Fatalf("the backtest's inputs read an unlisted area as national only: %v", err)
	}
}

func TestReadPublicFileErrors(t *testing.T) {
	const head = "kind,name,state,population,date,cases\n"
	for _, c := range []struct{ name, in, want string }{
		{"header", "a,b,c,d,e,f\n", "line 1: header"},
		{"kind", head + "totl,national,,,2020-10-01,1\n", "line 2: field kind"},
		{"date", head + "total,national,,,2020-13-01,1\n", "line 2: field date"},
		{"cases", head + "total,national,,,2020-10-01,-1\n", "line 2: field cases"},
		{"population", head + "total,national,,,2020-10-01,1\narea,1,,x,,\n", "line 3: field population"},
		{"twice", head + "total,national,,,2020-10-01,1\ntotal,national,,,2020-10-01,1\n", "line 3: national has 2020-10-01 twice"},
		{"no national", head + "area,1,,,,\n", "no national total"},
		{"gap", head + "total,national,,,2020-10-01,1\ntotal,national,,,2020-10-03,1\ntotal,B,,,2020-10-01,1\n", "days, want the national total's 3"},
		{"state without totals", head + "total,national,,,2020-10-01,1\narea,1,Bayern,,,\n", `state "Bayern", which has no total rows`},
		{"columns", head + "total,national\n", "line 2"},
	} {
		_, err := ReadPublicFile(strings.NewReader(c.in), "pub.csv")
		if !errors.Is(err, ErrPublicFile) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pub.csv") {
			t.Errorf("%s: %v, want an error naming pub.csv with %q", c.name, err, c.want)
		}
	}
}

func FuzzReadPublicFile(f *testing.F) {
	f.Add([]byte("kind,name,state,population,date,cases\ntotal,national,,,2020-10-01,1\ntotal,B,,,2020-10-01,1\narea,1,B,100,,\n"))
	f.Add([]byte("kind,name,state,population,date,cases\ntotal,national,,,2020-10-01,1\ntotal,national,,,2020-10-03,1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPublicFile(bytes.NewReader(b), "fuzz.csv")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WritePublicFile(&out, p); err != nil {
			t.Fatal(err)
		}
		q, err := ReadPublicFile(&out, "again.csv")
		if err != nil {
			t.Fatalf("a file read back fails: %v", err)
		}
		if len(q.National) != len(p.National) || len(q.AreaState) != len(p.AreaState) {
			t.Fatal("round trip changed the file")
		}
	})
}
