package backtest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The fixture's counts run from 2020-06-01 to 2020-10-31: the origin
// 2020-10-26 can be forecast, but its target week (10-27 … 11-02) ends
// after the file; 2020-10-19 is the last origin that can be scored.

// TestLastOriginNotScored: an origin whose target week ends after the
// cases file is forecast (hub file written) but not scored, and the
// summary, the table and the JSON say so; the scores are exactly those of
// the other origins (no partial week is scored).
func TestLastOriginNotScored(t *testing.T) {
	d, states := fixture(t, 4)
	o := baseOptions(d, states, 2)
	o.To = day("2020-10-26")
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Origins)
	if !res.Origins[n-1].Equal(day("2020-10-26")) || len(res.Forecasts[n-1]) != 4 {
		t.Fatalf("origins %v, %d forecasts at the last", res.Origins, len(res.Forecasts[n-1]))
	}
	sc, err := Score(res, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.UnscoredOrigins) != 1 || !sc.UnscoredOrigins[0].Equal(day("2020-10-26")) || sc.UnscoredForecasts != 4 {
		t.Fatalf("unscored origins %v, forecasts %d; want [2020-10-26], 4", sc.UnscoredOrigins, sc.UnscoredForecasts)
	}
	if last := sc.PerOrigin[len(sc.PerOrigin)-1].Origin; len(sc.PerOrigin) != n-1 || last != "2020-10-19" {
		t.Errorf("%d origins scored, the last %s; want %d, 2020-10-19", len(sc.PerOrigin), last, n-1)
	}
	cut := *res
	cut.Origins, cut.Forecasts, cut.EpsilonAt = res.Origins[:n-1], res.Forecasts[:n-1], res.EpsilonAt[:n-1]
	want, err := Score(&cut, d)
	if err != nil {
		t.Fatal(err)
	}
	if sc.All != want.All || len(want.UnscoredOrigins) != 0 || want.UnscoredForecasts != 0 {
		t.Errorf("scores with the unscorable origin %+v, without %+v (unscored %v)", sc.All, want.All, want.UnscoredOrigins)
	}

	sum := Summarise("default", res, sc)
	var md bytes.Buffer
	if err := sum.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if s := "(" + strconv.Itoa(n) + ", " + strconv.Itoa(n-1) + " scored)"; !strings.Contains(sum.Headline(), s) {
		t.Errorf("headline %q lacks %q", sum.Headline(), s)
	}
	for _, s := range []string{"| **all** | " + strconv.Itoa(n-1) + " |", "Not scored: the origin 2020-10-26"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, md.String())
		}
	}
	var js bytes.Buffer
	if err := sum.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Origins           int      `json:"origins"`
		UnscoredOrigins   []string `json:"unscored_origins"`
		UnscoredForecasts int      `json:"unscored_forecasts"`
	}
	if err := json.Unmarshal(js.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Origins != n || len(v.UnscoredOrigins) != 1 || v.UnscoredOrigins[0] != "2020-10-26" || v.UnscoredForecasts != 4 {
		t.Errorf("JSON %+v", v)
	}
	// Every forecast scored: nothing is said.
	if note := Summarise("default", &cut, want).UnscoredNote(); note != "" {
		t.Errorf("note %q with every forecast scored", note)
	}
}

// TestOriginsAfterTheFile: origins after the last day of the counts (of
// the file, or of one area) are refused before any campaign, naming the
// last origin that can be forecast and the last that can be scored; an
// area whose counts stop inside a scored origin's target week leaves that
// one forecast unscored, and the note says so.
func TestOriginsAfterTheFile(t *testing.T) {
	d, states := fixture(t, 4)
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{"2020-08-03", "2020-11-02", []string{"cases file ends on 2020-10-31", "last forecast origin 2020-11-02",
			"can be forecast is 2020-10-26", "can be scored 2020-10-19"}},
		{"2020-08-03", "2020-11-08", []string{"last forecast origin 2020-11-02 (--to 2020-11-08)", "2020-10-26", "2020-10-19"}},
		{"2020-10-26", "2020-11-02", []string{"can be forecast is 2020-10-26 (no origin's target week can be scored)"}},
		{"2020-11-02", "2020-11-30", []string{"ends before --from 2020-11-02", "on or before 2020-10-31"}},
	} {
		o := baseOptions(d, states, 2)
		o.From, o.To = day(c.from), day(c.to)
		_, err := Run(o)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s … %s: %v; want %q", c.from, c.to, err, w)
			}
		}
	}

	// One area's counts stop on 2020-10-22.
	short := clone(d)
	r := short.Regions[1]
	r.Cases = r.Cases[:r.Index(day("2020-10-22"))+1]
	o := baseOptions(short, states, 2)
	o.To = day("2020-10-26")
	_, err := Run(o)
	for _, w := range []string{"counts of area \u201c" + r.Name + "\u201d end on 2020-10-22", "can be forecast is 2020-10-19", "can be scored 2020-10-12"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("one short area: %v; want %q", err, w)
		}
	}
	o.To = day("2020-10-19")
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Score(res, short)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.UnscoredOrigins) != 0 || sc.UnscoredForecasts != 1 {
		t.Errorf("unscored origins %v, forecasts %d; want none, 1", sc.UnscoredOrigins, sc.UnscoredForecasts)
	}
	if note := Summarise("default", res, sc).UnscoredNote(); !strings.HasPrefix(note, "1 forecast at a scored origin is not scored") {
		t.Errorf("note %q", note)
	}
}

func TestLastOriginBy(t *testing.T) {
	for _, c := range []struct {
		from, day, want string
		ok              bool
	}{
		{"2020-08-03", "2020-08-03", "2020-08-03", true},
		{"2020-08-03", "2020-08-09", "2020-08-03", true},
		{"2020-08-03", "2020-08-10", "2020-08-10", true},
		{"2020-08-03", "2020-08-02", "", false},
		{"2021-03-01", "2021-03-31", "2021-03-29", true}, // across the change to summer time (dates are UTC)
	} {
		got, ok := lastOriginBy(day(c.from), day(c.day))
		if ok != c.ok || ok && got.Format(time.DateOnly) != c.want {
			t.Errorf("lastOriginBy(%s, %s) = %v, %v; want %s, %v", c.from, c.day, got, ok, c.want, c.ok)
		}
	}
}
