package ui

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestLongChart: ten years of days used to make a path longer than vugu's
// 16 KiB instruction buffer (the app stopped at about 1,100 days). Every
// path must now fit, the line must be reduced to about the plot's width,
// and the decimation must keep the peak and the lowest value.
func TestLongChart(t *testing.T) {
	for _, days := range []int{10, 1_000, 1_100, 3_650, 100_000} {
		raw := make([]Point, days)
		smooth := make([]Point, days)
		for i := range raw {
			v := 100 + 90*math.Sin(float64(i)/50) + float64(i%7)
			raw[i] = Point{float64(18000 + i), v}
			smooth[i] = Point{float64(18000 + i), v}
		}
		peak := days / 3
		raw[peak].Y, smooth[peak].Y = 5000, 5000
		smooth[0].Y, smooth[days-1].Y = math.NaN(), math.NaN()
		c := &Chart{Dates: true, Lines: []Line{
			{Name: "raw", Class: "raw", Bars: true, Points: raw},
			{Name: "smooth", Class: "smooth", Points: smooth},
		}}
		p := c.Layout()
		top := p.YTicks[len(p.YTicks)-1]
		for _, path := range p.Paths {
			if len(path.D) > MaxPathBytes {
				t.Errorf("%d days: a %s path of %d bytes (limit %d)", days, path.Class, len(path.D), MaxPathBytes)
			}
			if strings.Count(path.D, "M")+strings.Count(path.D, "L") > 2*int((p.Right-p.Left)*pointsPerPixel)+4 {
				t.Errorf("%d days: %d points drawn", days, strings.Count(path.D, "M")+strings.Count(path.D, "L"))
			}
		}
		// The peak (5000) sets the axis; the highest point drawn must reach
		// it in both lines (the smallest screen y is the highest value).
		for _, cls := range []string{"raw", "smooth"} {
			best := math.Inf(1)
			for _, path := range p.Paths {
				if path.Class != cls {
					continue
				}
				for _, y := range pathYs(path.D) {
					best = math.Min(best, y)
				}
			}
			want := p.Bottom - 5000/parseLabel(top.Label)*(p.Bottom-p.Top)
			if math.Abs(best-want) > 0.11 {
				t.Errorf("%d days, %s: highest point at y=%v, the peak is at %v", days, cls, best, want)
			}
		}
	}
}

// pathYs returns the y coordinates of an SVG path's M, L and V commands.
func pathYs(d string) []float64 {
	var ys []float64
	for _, seg := range strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' }) {
		if i := strings.IndexByte(seg, 'V'); i >= 0 {
			v, _ := strconv.ParseFloat(seg[i+1:], 64)
			ys = append(ys, v)
			seg = seg[:i]
		}
		if f := strings.Fields(seg); len(f) == 2 {
			v, _ := strconv.ParseFloat(f[1], 64)
			ys = append(ys, v)
		}
	}
	return ys
}

func parseLabel(s string) float64 {
	v, _ := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return v
}

func TestDecimate(t *testing.T) {
	pts := []Point{{0, 1}, {1, 5}, {2, 3}, {3, math.NaN()}, {4, 2}, {5, 9}, {6, 0}, {7, 4}}
	got := decimate(pts, false, 2) // columns [0,3.5) and [3.5,7]
	want := []Point{{0, 1}, {1, 5}, {X: math.NaN(), Y: math.NaN()}, {5, 9}, {6, 0}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !(got[i] == want[i] || math.IsNaN(got[i].X) && math.IsNaN(want[i].X)) {
			t.Errorf("point %d: %v, want %v", i, got[i], want[i])
		}
	}
	bars := decimate(pts, true, 2)
	if len(bars) != 3 || bars[0] != (Point{1, 5}) || bars[2] != (Point{5, 9}) {
		t.Errorf("bars: %v", bars)
	}
	if short := decimate(pts[:4], false, 2); len(short) != 4 {
		t.Errorf("a short line changed: %v", short)
	}
}

func TestAxisLabel(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 950: "950", 12000: "12,000", 99999: "99,999", 100000: "100k",
		250000: "250k", 1.5e6: "1.5M", 2e6: "2M", 1.25e9: "1.3B", -3e6: "−3M"} {
		if got := AxisLabel(v); got != want {
			t.Errorf("AxisLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestChartLabelsFit: at any magnitude the y-axis labels are short and
// the plot's left margin leaves room for the longest one.
func TestChartLabelsFit(t *testing.T) {
	for _, top := range []float64{3, 870, 45000, 2.4e6, 7e9} {
		c := &Chart{Lines: []Line{{Points: []Point{{X: 0, Y: 0}, {X: 1, Y: top}}}}}
		p := c.Layout()
		for _, tk := range p.YTicks {
			n := float64(len([]rune(tk.Label)))
			if n > 6 || p.Left < 30+7.5*n {
				t.Errorf("max %v: label %q does not fit a left margin of %v", top, tk.Label, p.Left)
			}
		}
	}
}
