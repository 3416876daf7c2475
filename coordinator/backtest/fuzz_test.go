package backtest

import (
	"bytes"
	"testing"
)

// FuzzReadHubFile: the hub reader never panics, and what it accepts has
// every level of every location, non-negative.
func FuzzReadHubFile(f *testing.F) {
	head := "reference_date,target,horizon,target_end_date,location,output_type,output_type_id,value\n"
	f.Add([]byte(head + "2020-08-03,wk inc case,1,2020-08-10,01001,quantile,0.5,3\n"))
	f.Add([]byte(head))
	f.Add([]byte("a,b\n1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, qs, err := ReadHubFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		for loc, q := range qs {
			for i, v := range q {
				if !(v >= 0) {
					t.Fatalf("location %q level %d: %v accepted", loc, i, v)
				}
			}
		}
	})
}

// FuzzParseCounties: the counties reader never panics, and every area it
// accepts has a state and a population.
func FuzzParseCounties(f *testing.F) {
	f.Add([]byte("county_id,name,state,population\n01001,Flensburg,Schleswig-Holstein,91113\n"))
	f.Add([]byte("county_id,state,population\n01001,,5\n"))
	f.Add([]byte("county_id,name,state,population\n01001,x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCounties(b, "counties.csv")
		if err != nil {
			return
		}
		for id, s := range c.State {
			if s == "" || !(c.Population[id] > 0) {
				t.Fatalf("area %q: state %q, population %v", id, s, c.Population[id])
			}
		}
	})
}
