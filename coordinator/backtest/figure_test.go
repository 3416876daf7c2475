package backtest

import (
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// labelWidth is about the width of a YYYY-MM-DD label at 12 px.
const labelWidth = 62.0

// TestFigureLabelsApart: the origin labels never overlap, whatever the
// number of origins. A 13-origin replay (a quarter) labelled every origin
// 52.5 units apart, and the dates ran into each other.
func TestFigureLabelsApart(t *testing.T) {
	label := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">\d{4}-\d{2}-\d{2}</text>`)
	day := time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 2, 5, 9, 13, 20, 38, 60, 78, 200} {
		s := Summary{Design: "weekly", LHAs: 3, EpsilonBudget: 2}
		for i := range n {
			s.PerOrigin = append(s.PerOrigin, OriginScore{Origin: day.AddDate(0, 0, 7*i).Format(time.DateOnly), RelativeWIS: 0.9, EpsilonSpent: 2})
		}
		var b bytes.Buffer
		if err := WriteFigure(&b, s); err != nil {
			t.Fatal(err)
		}
		ms := label.FindAllStringSubmatch(b.String(), -1)
		if len(ms) == 0 {
			t.Fatalf("%d origins: no date label", n)
		}
		prev := -1e9
		for _, m := range ms {
			x, _ := strconv.ParseFloat(m[1], 64)
			if x-prev < labelWidth {
				t.Errorf("%d origins: labels at x = %.1f and %.1f overlap (want ≥ %g apart)", n, prev, x, labelWidth)
			}
			prev = x
		}
	}
}
