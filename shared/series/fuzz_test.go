package series

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that every notice it gives
// is complete, and that whatever it accepts survives Write and a second
// Parse unchanged, unless the second Parse reads the written daily counts
// as a running total (counts that only ever rise for four weeks and end
// at 100 or more; see runningTotalShape), which is what Parse promises
// for such a file.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{
		"date,region,cases\n2020-11-01,A,1\n2020-11-05,A,2\n2020-11-01,B,0\n",
		"cases;date;region\r\n1,0;2020/11/01;\"x;y\"\r\n",
		"date,cases\n2020-01-01,1e3\n",
		"date,region,cases\n2020-01-01,\"a\"\"b\",0x1p4\n",
		"date,region,cases\n9999-12-31,A,1\n0000-01-01,B,2\n",
		"Datum;Landkreis;F\xe4lle\n01.11.2020;M\xfcnchen;3\n",
		"date,county,cumulative_cases\n2020-11-01,A,5\n2020-11-09,A,3\n",
		"Meldedatum,IdLandkreis,AnzahlFall,NeuerFall\n2020/11/01,1,2,0\n2020/11/01,1,-1,-1\n2020/11/01,1,3,1\n",
		"date,cases\n13/11/2020,1\n01/12/2020,2\n",
		"PK\x03\x04",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := Parse(bytes.NewReader(in), "fuzz.csv")
		if err != nil {
			if d != nil {
				t.Fatalf("Parse returned a dataset and an error")
			}
			return
		}
		for _, n := range d.Notices {
			if n.Code == "" || n.Message == "" || (n.Level != Info && n.Level != Warning) {
				t.Fatalf("incomplete notice %+v", n)
			}
		}
		for i, r := range d.Regions {
			if i > 0 && d.Regions[i-1].Name >= r.Name {
				t.Fatalf("regions not sorted and unique: %q, %q", d.Regions[i-1].Name, r.Name)
			}
			if len(r.Cases) == 0 || len(r.Cases) > MaxSpanDays {
				t.Fatalf("region %q has %d days", r.Name, len(r.Cases))
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, d); err != nil {
			t.Fatalf("Write of a parsed dataset: %v", err)
		}
		d2, err := Parse(&buf, "fuzz.csv")
		if err != nil {
			t.Fatalf("Parse(Write(d)): %v\n%s", err, buf.Bytes())
		}
		if d2.Columns.CasesAre == CasesRunning {
			return
		}
		if !equalDatasets(d, d2) {
			t.Fatalf("Parse(Write(d)) != d\n%s", buf.Bytes())
		}
	})
}
