package ui

import (
	"github.com/fedcast/fedcast/shared/forecast"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A Chart describes a line chart; Layout turns it into SVG geometry that
// the LineChart component draws. The x values are either plain numbers
// (rounds) or calendar days (Dates set: x = days since 1970-01-01, see Day).
type Chart struct {
	Title  string // shown above the plot
	XLabel string // axis title under the x axis
	YLabel string // axis title with the unit, e.g. "cases per day"
	Dates  bool   // x values are days (Day); ticks show dates
	Lines  []Line
	// Bands are shaded ranges (a forecast's 50 % and 95 % ranges), drawn
	// under the lines.
	Bands []Band
	// HRefs are horizontal reference lines (a budget), VRefs vertical ones
	// (the last reported day).
	HRefs, VRefs []Ref
	// YMax, when above the data, fixes the top of the y axis (a budget).
	YMax float64
	// Width and Height of the SVG in user units; zero gives 720×300.
	Width, Height float64
}

// A Line is one series of the chart.
type Line struct {
	Name    string  // legend text
	Class   string  // CSS class: stroke colour and width ("raw", "smooth", "forecast", "eps", …)
	Points  []Point // in x order; NaN y values break the line
	Markers bool    // draw a dot at each point
	Bars    bool    // draw thin vertical bars from 0 instead of a line
}

// A Band is a shaded range between a lower and an upper curve.
type Band struct {
	Name   string      // legend text
	Class  string      // CSS class: fill ("band95", "band50")
	Points []BandPoint // in x order
}

// BandPoint is the range of a band at one x.
type BandPoint struct{ X, Lo, Hi float64 }

// Point is one (x, y) value.
type Point struct{ X, Y float64 }

// Ref is a reference line at a value, with a label.
type Ref struct {
	At    float64
	Label string
	Class string
}

// Day returns t's calendar date as days since 1970-01-01 (the x unit of a
// date chart).
func Day(t time.Time) float64 {
	y, m, d := t.Date()
	return float64(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// DayTime is the inverse of Day.
func DayTime(x float64) time.Time {
	return time.Unix(int64(math.Round(x))*86400, 0).UTC()
}

// Plot is a chart laid out in SVG user units.
type Plot struct {
	Title                    string
	Width, Height            float64
	Left, Top, Right, Bottom float64 // the plotting area
	XLabel, YLabel           string
	XTicks, YTicks           []Tick
	Paths                    []Path
	Bands                    []Path // closed shapes, drawn before Paths
	HRefs, VRefs             []RefLine
	Legend                   []LegendItem
	Empty                    bool // nothing to draw
}

// Tick is an axis tick at screen position Pos.
type Tick struct {
	Pos   float64
	Label string
}

// Path is one line or bar set, as an SVG path, plus marker dots.
type Path struct {
	D       string
	Class   string
	Markers []Point // screen coordinates
	Bars    bool
}

// RefLine is a reference line in screen coordinates.
type RefLine struct {
	X1, Y1, X2, Y2 float64
	LX, LY         float64 // label position
	Label, Class   string
}

// LegendItem is one legend entry.
type LegendItem struct {
	X, Y  float64
	Name  string
	Class string
	Bars  bool
	Band  bool // a shaded range: drawn as a thick stroke
}

// ViewBox is the SVG viewBox attribute.
func (p *Plot) ViewBox() string {
	return "0 0 " + num(p.Width) + " " + num(p.Height)
}

// YLabelTransform rotates the y-axis title.
func (p *Plot) YLabelTransform() string {
	return "translate(14," + num((p.Top+p.Bottom)/2) + ") rotate(-90)"
}

// XLabelY is the baseline of the x-axis title.
func (p *Plot) XLabelY() float64 { return p.Height - 6 }

// XLabelX centres the x-axis title.
func (p *Plot) XLabelX() float64 { return (p.Left + p.Right) / 2 }

// Layout computes the geometry.
func (c *Chart) Layout() *Plot {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 720
	}
	if h == 0 {
		h = 300
	}
	p := &Plot{Title: c.Title, Width: w, Height: h, XLabel: c.XLabel, YLabel: c.YLabel,
		Left: 70, Top: 34, Right: w - 20, Bottom: h - 46}

	xmin, xmax, ymin, ymax, ok := c.extent()
	if !ok {
		p.Empty = true
		return p
	}
	yticks := niceTicks(ymin, ymax, 5)
	ymin, ymax = yticks[0], yticks[len(yticks)-1]

	sx := func(x float64) float64 { return p.Left + (x-xmin)/(xmax-xmin)*(p.Right-p.Left) }
	sy := func(y float64) float64 { return p.Bottom - (y-ymin)/(ymax-ymin)*(p.Bottom-p.Top) }

	p.Left = max(p.Left, leftFor(yticks))
	for _, v := range yticks {
		p.YTicks = append(p.YTicks, Tick{Pos: sy(v), Label: AxisLabel(v)})
	}
	if c.Dates {
		for _, x := range dateTicks(xmin, xmax) {
			p.XTicks = append(p.XTicks, Tick{Pos: sx(x), Label: dateTickLabel(x, xmax-xmin)})
		}
	} else {
		for _, v := range niceTicks(xmin, xmax, 6) {
			if v < xmin-1e-9 || v > xmax+1e-9 {
				continue
			}
			p.XTicks = append(p.XTicks, Tick{Pos: sx(v), Label: FormatCount(v)})
		}
	}

	for _, l := range c.Lines {
		p.Paths = append(p.Paths, linePaths(l, sx, sy, p.Right-p.Left)...)
	}
	for _, bd := range c.Bands {
		if path, ok := bandPath(bd, sx, sy); ok {
			p.Bands = append(p.Bands, path)
		}
	}
	for _, r := range c.HRefs {
		y := sy(r.At)
		p.HRefs = append(p.HRefs, RefLine{X1: p.Left, Y1: y, X2: p.Right, Y2: y, LX: p.Right - 4, LY: y - 5, Label: r.Label, Class: r.Class})
	}
	for _, r := range c.VRefs {
		x := sx(r.At)
		p.VRefs = append(p.VRefs, RefLine{X1: x, Y1: p.Top, X2: x, Y2: p.Bottom, LX: x - 4, LY: p.Bottom - 6, Label: r.Label, Class: r.Class})
	}
	p.Legend = c.legend(p.Left)
	return p
}

// extent is the range of the data on both axes (the y axis starts at 0:
// counts, ε), widened so neither is empty; ok is false when there is
// nothing to draw.
func (c *Chart) extent() (xmin, xmax, ymin, ymax float64, ok bool) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = 0.0, math.Inf(-1)
	for _, l := range c.Lines {
		for _, pt := range l.Points {
			if math.IsNaN(pt.X) || math.IsInf(pt.X, 0) {
				continue
			}
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
			if !math.IsNaN(pt.Y) && !math.IsInf(pt.Y, 0) {
				ymin, ymax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y)
			}
		}
	}
	for _, b := range c.Bands {
		for _, pt := range b.Points {
			if math.IsNaN(pt.X) || math.IsInf(pt.X, 0) || math.IsNaN(pt.Lo) || math.IsNaN(pt.Hi) || math.IsInf(pt.Hi, 0) {
				continue
			}
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
			ymin, ymax = math.Min(ymin, pt.Lo), math.Max(ymax, pt.Hi)
		}
	}
	for _, r := range c.HRefs {
		ymax = math.Max(ymax, r.At)
	}
	for _, r := range c.VRefs {
		xmin, xmax = math.Min(xmin, r.At), math.Max(xmax, r.At)
	}
	if c.YMax > ymax {
		ymax = c.YMax
	}
	if math.IsInf(xmin, 1) {
		return 0, 0, 0, 0, false
	}
	if math.IsInf(ymax, -1) || ymax <= ymin {
		ymax = ymin + 1
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	return xmin, xmax, ymin, ymax, true
}

// bandPath is a band as a closed SVG path in screen coordinates (along
// its upper edge, back along its lower); ok is false with fewer than two
// drawable points.
func bandPath(bd Band, sx, sy func(float64) float64) (p Path, ok bool) {
	var good []BandPoint
	for _, pt := range bd.Points {
		if !math.IsNaN(pt.X) && !math.IsNaN(pt.Lo) && !math.IsNaN(pt.Hi) && !math.IsInf(pt.Hi, 0) {
			good = append(good, pt)
		}
	}
	if len(good) < 2 {
		return Path{}, false
	}
	var b strings.Builder
	for i, pt := range good {
		cmd := "L"
		if i == 0 {
			cmd = "M"
		}
		b.WriteString(cmd + num(sx(pt.X)) + " " + num(sy(pt.Hi)))
	}
	for i := len(good) - 1; i >= 0; i-- {
		b.WriteString("L" + num(sx(good[i].X)) + " " + num(sy(good[i].Lo)))
	}
	b.WriteString("Z")
	return Path{D: b.String(), Class: bd.Class}, true
}

// legend lays out the named lines, then the named bands, in a row from x.
func (c *Chart) legend(x float64) []LegendItem {
	var items []LegendItem
	add := func(it LegendItem) {
		if it.Name == "" {
			return
		}
		it.X, it.Y = x, 14
		items = append(items, it)
		x += 34 + 7*float64(len([]rune(it.Name)))
	}
	for _, l := range c.Lines {
		add(LegendItem{Name: l.Name, Class: l.Class, Bars: l.Bars})
	}
	for _, b := range c.Bands {
		add(LegendItem{Name: b.Name, Class: b.Class, Band: true})
	}
	return items
}

// MaxPathBytes bounds the length of one SVG path's d attribute. vugu's DOM
// renderer passes every attribute through a fixed 16 KiB instruction
// buffer and stops the app ("requested instruction does not fit in the
// buffer") when one does not fit: a line of more than about 1,000 days did
// that. Longer paths are split into several path elements.
const MaxPathBytes = 8 << 10

// pointsPerPixel bounds how many points a line keeps per pixel of plot
// width: a line with more is reduced, per column of 1/pointsPerPixel
// pixels, to that column's lowest and highest value (bars: its highest),
// which looks the same on screen (min/max decimation).
const pointsPerPixel = 0.5

// linePaths turns one line into SVG paths in screen coordinates, decimated
// to at most about width·pointsPerPixel columns and split so that no path
// is longer than MaxPathBytes.
func linePaths(l Line, sx, sy func(float64) float64, width float64) []Path {
	pts := l.Points
	if !l.Markers {
		pts = decimate(pts, l.Bars, int(width*pointsPerPixel))
	}
	var out []Path
	cur := Path{Class: l.Class, Bars: l.Bars}
	var b strings.Builder
	pen := false
	var last string // the previous point, to restart a split line there
	for _, pt := range pts {
		if math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) || math.IsNaN(pt.X) {
			pen = false
			continue
		}
		x, y := sx(pt.X), sy(pt.Y)
		if b.Len() > MaxPathBytes-64 {
			cur.D = b.String()
			out = append(out, cur)
			cur = Path{Class: l.Class, Bars: l.Bars}
			b.Reset()
			if pen && last != "" {
				b.WriteString("M" + last)
			}
		}
		xy := num(x) + " " + num(y)
		switch {
		case l.Bars:
			b.WriteString("M" + num(x) + " " + num(sy(0)) + "V" + num(y))
		case pen && b.Len() > 0:
			b.WriteString("L" + xy)
		default:
			b.WriteString("M" + xy)
			pen = true
		}
		last = xy
		if l.Markers {
			cur.Markers = append(cur.Markers, Point{x, y})
		}
	}
	cur.D = b.String()
	return append(out, cur)
}

// decimate reduces pts (in x order) to at most about 2·cols points: the x
// range is cut into cols equal columns and each keeps its lowest and
// highest finite point, in x order (bars keep only the highest). A column
// holding a NaN keeps one NaN as well, so gaps still break the line. Lines
// of at most 2·cols points come back unchanged.
func decimate(pts []Point, bars bool, cols int) []Point {
	if cols < 1 || len(pts) <= 2*cols {
		return pts
	}
	x0, x1 := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if !math.IsNaN(p.X) && !math.IsInf(p.X, 0) {
			x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
		}
	}
	if !(x1 > x0) {
		return pts
	}
	out := make([]Point, 0, 2*cols+8)
	col := -1
	var lo, hi Point
	var have, gap bool
	flush := func() {
		switch {
		case !have:
		case bars:
			out = append(out, hi)
		case lo.X <= hi.X && lo != hi:
			out = append(out, lo, hi)
		case lo != hi:
			out = append(out, hi, lo)
		default:
			out = append(out, lo)
		}
		if gap {
			out = append(out, Point{X: math.NaN(), Y: math.NaN()})
		}
		have, gap = false, false
	}
	for _, p := range pts {
		if math.IsNaN(p.X) || math.IsInf(p.X, 0) {
			continue
		}
		c := min(int((p.X-x0)/(x1-x0)*float64(cols)), cols-1)
		if c != col {
			flush()
			col = c
		}
		if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
			gap = true
			continue
		}
		switch {
		case !have:
			lo, hi, have = p, p, true
		case p.Y < lo.Y:
			lo = p
		case p.Y > hi.Y:
			hi = p
		}
	}
	flush()
	return out
}

// niceTicks returns about n evenly spaced round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if span/step <= float64(n) {
			break
		}
	}
	start := math.Floor(lo/step+1e-9) * step
	end := math.Ceil(hi/step-1e-9) * step
	var out []float64
	for v := start; v <= end+step/2; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	if len(out) < 2 {
		out = append(out, start+step)
	}
	return out
}

// dateTicks returns tick days for the span [lo, hi]: every 1, 2 or 7 days,
// every 14 days (Mondays), or the 1st of every 1, 2, 3, 6 or 12 months.
func dateTicks(lo, hi float64) []float64 {
	span := hi - lo
	var out []float64
	for _, step := range []float64{1, 2, 7, 14} {
		if span/step > 8 {
			continue
		}
		first := math.Ceil(lo)
		if step >= 7 {
			// 1970-01-01 was a Thursday: day 4 is a Monday.
			first = math.Ceil((lo-4)/step)*step + 4
		}
		for x := first; x <= hi+1e-9; x += step {
			out = append(out, x)
		}
		return out
	}
	for _, months := range []int{1, 2, 3, 6, 12} {
		if span/(30.44*float64(months)) > 8 {
			continue
		}
		t := DayTime(math.Ceil(lo))
		t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		for ; Day(t) <= hi+1e-9; t = t.AddDate(0, months, 0) {
			if m := int(t.Month()) - 1; m%months != 0 {
				continue
			}
			if Day(t) >= lo-1e-9 {
				out = append(out, Day(t))
			}
		}
		return out
	}
	for y := DayTime(lo).Year(); ; y++ {
		x := Day(time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC))
		if x > hi {
			return out
		}
		if x >= lo {
			out = append(out, x)
		}
	}
}

func dateTickLabel(x, span float64) string {
	t := DayTime(x)
	switch {
	case span <= 120:
		return t.Format("2 Jan")
	case span <= 800:
		return t.Format("Jan 2006")
	}
	return t.Format("2006")
}

// num formats a coordinate with at most one decimal.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// FormatCount formats a number for people: thousands separated by commas,
// at most two decimals below 10, none from 100 up (forecast.Count, which
// the client's words share).
func FormatCount(v float64) string { return forecast.Count(v) }

// leftFor is the left margin the y ticks' labels need: they end 8 units
// left of the plot and the y-axis title sits at 14, so 30 units plus about
// 7.5 a character at the page's chart font.
func leftFor(ticks []float64) float64 {
	longest := 0
	for _, v := range ticks {
		longest = max(longest, utf8.RuneCountInString(AxisLabel(v)))
	}
	return 30 + 7.5*float64(longest)
}

// AxisLabel formats an axis tick: FormatCount below 100,000 (at most
// "99,999"), then k, M or B with at most one decimal ("250k", "1.5M"), so
// that labels stay short at any magnitude.
func AxisLabel(v float64) string {
	a := math.Abs(v)
	if a < 1e5 || math.IsInf(v, 0) || math.IsNaN(v) {
		return FormatCount(v)
	}
	unit, div := "k", 1e3
	switch {
	case a >= 1e9:
		unit, div = "B", 1e9
	case a >= 1e6:
		unit, div = "M", 1e6
	}
	s := strings.TrimSuffix(strconv.FormatFloat(math.Round(a/div*10)/10, 'f', 1, 64), ".0")
	if v < 0 {
		s = "−" + s
	}
	return s + unit
}

func groupThousands(s string) string {
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
