package series_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

func ExampleParse() {
	const file = `Meldedatum;County_ID;Fälle
2020-11-01;01001;3
2020-11-02;01001;5
2020-11-04;01001;4
2020-11-01;01002;12
`
	d, err := series.Parse(strings.NewReader(file), "cases.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range d.Regions {
		fmt.Println(r.Name, r.Start.Format(time.DateOnly), r.Cases)
	}
	// Output:
	// 01001 2020-11-01 [3 5 0 4]
	// 01002 2020-11-01 [12]
}

func ExampleParseError() {
	const file = "date,region,cases\n2020-11-01,01001,3\n2020-11-02,01001,-4\n"
	_, err := series.Parse(strings.NewReader(file), "cases.csv")
	var pe *series.ParseError
	if errors.As(err, &pe) {
		fmt.Println(err)
		fmt.Println(errors.Is(err, series.ErrNegative), pe.Line, pe.Column, pe.Field)
		fmt.Println(pe.Hint)
	}
	// Output:
	// cases.csv:3:3 (cases): series: negative count "-4"
	// true 3 3 cases
	// Case counts cannot be negative. If this row corrects an earlier over-count, subtract it from the earlier day instead, or write 0.
}

func ExampleMovingAverage7() {
	// A weekly reporting pattern (low Sunday, Monday catch-up) disappears.
	src := []float64{10, 2, 14, 12, 11, 10, 11, 10, 2, 14, 12, 11}
	dst := make([]float64, len(src))
	series.MovingAverage7(dst, src, series.Centered)
	fmt.Println(dst)
	series.MovingAverage7(dst, src, series.Trailing)
	fmt.Println(dst)
	// Output:
	// [NaN NaN NaN 10 10 10 10 10 10 NaN NaN NaN]
	// [NaN NaN NaN NaN NaN NaN 10 10 10 10 10 10]
}

// The November 2020 study of the paper: 31 days, 14 windows per county.
func ExampleMakeWindows() {
	start := time.Date(2020, 10, 1, 0, 0, 0, 0, time.UTC)
	r := &series.Region{Name: "01001", Start: start, Cases: make([]float64, 92)}
	for i := range r.Cases {
		r.Cases[i] = float64(7 * i) // a straight line: its average is itself
	}
	areas, err := series.MakeWindows(&series.Dataset{Regions: []*series.Region{r}}, series.WindowOptions{
		From: time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC),
		To:   time.Date(2020, 12, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ws := areas[0].Windows
	fmt.Println(len(ws), "windows")
	fmt.Println("first:", ws[0].X, "on", ws[0].InputEnd.Format(time.DateOnly), "→", ws[0].Y, "on", ws[0].Target.Format(time.DateOnly))
	fmt.Println("last target:", ws[len(ws)-1].Target.Format(time.DateOnly))

	train, test := series.SplitAreas(areas, series.Temporal, 0, nil)
	fmt.Println(len(train[0].Windows), "train,", len(test[0].Windows), "test")
	// Output:
	// 14 windows
	// first: [224 231 238 245 252 259 266 273 280 287] on 2020-11-11 → 336 on 2020-11-18
	// last target: 2020-12-01
	// 12 train, 2 test
}

func ExampleLatestInput() {
	start := time.Date(2020, 11, 1, 0, 0, 0, 0, time.UTC)
	r := &series.Region{Name: "01001", Start: start, Cases: make([]float64, 30)}
	for i := range r.Cases {
		r.Cases[i] = 20
	}
	for _, s := range []series.Smoothing{series.Centered, series.Trailing} {
		x, end, target, err := series.LatestInput(r, series.WindowOptions{Smoothing: s})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: data to %s, input %d days to %s, forecast for %s\n", s,
			r.End().Format(time.DateOnly), len(x), end.Format(time.DateOnly), target.Format(time.DateOnly))
	}
	// Output:
	// centered: data to 2020-11-30, input 10 days to 2020-11-27, forecast for 2020-12-04
	// trailing: data to 2020-11-30, input 10 days to 2020-11-30, forecast for 2020-12-07
}

// A per-district file in the layout of a widely used open repository:
// Cases is the running total, Cases_New the daily count, and no column
// names the area. Parse takes Cases_New, names the area after the file
// and says so.
func ExampleParse_districtFile() {
	const file = "Date\tCases\tDeaths\tCases_New\tDeaths_New\tCases_Last_Week\n" +
		"2020-11-01\t1200\t20\t30\t0\t190\n" +
		"2020-11-02\t1245\t20\t45\t0\t200\n" +
		"2020-11-03\t1266\t21\t21\t1\t195\n"
	d, err := series.Parse(strings.NewReader(file), "munich.tsv")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := d.Regions[0]
	fmt.Println(r.Name, r.Cases, d.Columns.Cases, d.Columns.CasesAre)
	for _, n := range d.Notices {
		fmt.Println(n.Level, n.Code)
	}
	// Output:
	// munich [30 45 21] Cases_New daily
	// info columns
	// info daily_column
	// info ignored_columns
}

// A running total given alone is turned into daily counts, with a
// warning that says so.
func ExampleParse_runningTotal() {
	const file = "date,county,cumulative_cases\n" +
		"2020-11-01,A,100\n2020-11-02,A,130\n2020-11-03,A,160\n"
	d, err := series.Parse(strings.NewReader(file), "totals.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Regions[0].Start.Format(time.DateOnly), d.Regions[0].Cases)
	for _, n := range d.Warnings() {
		fmt.Println(n.Code+":", n.Message)
	}
	// Output:
	// 2020-11-02 [30 30]
	// running_total: The column “cumulative_cases” holds a running total (all cases so far), not new cases per day. fedcast turned it into daily counts by taking the difference from one reported day to the next; the first day of each area (2020-11-01) is left out, since the cases before it are unknown.
}
