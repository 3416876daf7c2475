package backtest

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Figure geometry (SVG user units).
const (
	figW, figH             = 760.0, 360.0
	padL, padR, padT, padB = 60.0, 70.0, 40.0, 60.0
)

// FigureMax is the top of the figure's relative WIS axis.
const FigureMax = 3.0

// WriteFigure draws the relative WIS of each origin (left axis, a dashed
// line at 1 for no change) and the lifetime ε spent (right axis) as an
// SVG. Without noise (ε = ∞) the right axis says so instead.
func WriteFigure(w io.Writer, s Summary) error {
	pts := s.PerOrigin
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", figW, figH, figW, figH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="14">%s</text>`+"\n", padL, escape(figureTitle(s)))
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g">no origin could be scored</text>`+"\n", padL, figH/2)
		b.WriteString("</svg>\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	ymax := 1.2
	for _, p := range pts {
		if !math.IsNaN(p.RelativeWIS) && !math.IsInf(p.RelativeWIS, 0) {
			ymax = math.Max(ymax, p.RelativeWIS)
		}
	}
	// Origins far above no change are drawn at the top: the axis stops at
	// FigureMax so that the rest stays readable.
	ymax = math.Ceil(math.Min(ymax, FigureMax)*5) / 5
	x := func(i int) float64 {
		if len(pts) == 1 {
			return (padL + figW - padR) / 2
		}
		return padL + float64(i)/float64(len(pts)-1)*(figW-padL-padR)
	}
	y := func(v float64) float64 { return figH - padB - v/ymax*(figH-padT-padB) }
	// Axes, grid and the no-change line.
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", padL, padT, padL, figH-padB)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", padL, figH-padB, figW-padR, figH-padB)
	for v := 0.0; v <= ymax+1e-9; v += 0.2 {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%.1f</text>`+"\n",
			padL, y(v), figW-padR, y(v), padL-6, y(v)+4, v)
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#555" stroke-dasharray="6 4"/><text x="%g" y="%.1f" fill="#555">no change</text>`+"\n",
		padL, y(1), figW-padR, y(1), padL+4, y(1)-4)
	fmt.Fprintf(&b, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">relative WIS (per origin)</text>`+"\n", (padT+figH-padB)/2)
	step := labelStep(len(pts))
	for i := 0; i < len(pts); i += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x(i), figH-padB+18, pts[i].Origin)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">forecast origin</text>`+"\n", (padL+figW-padR)/2, figH-padB+40)
	// Relative WIS per origin.
	b.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="`)
	for i, p := range pts {
		fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(math.Min(p.RelativeWIS, ymax)))
	}
	b.WriteString(`"/>` + "\n")
	writeEpsilonAxis(&b, pts, x)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// minLabelGap is the least distance between the centres of two date
// labels on the origin axis: a YYYY-MM-DD label at 12 px is about 62
// units wide.
const minLabelGap = 66.0

// labelStep is the stride of the labelled origins among n: about eight
// labels, never so close that two overlap.
func labelStep(n int) int {
	step := max(1, n/8)
	if n < 2 {
		return step
	}
	gap := (figW - padL - padR) / float64(n-1)
	return max(step, int(math.Ceil(minLabelGap/gap)))
}

// writeEpsilonAxis draws the lifetime ε spent on the right axis.
func writeEpsilonAxis(b *strings.Builder, pts []OriginScore, x func(int) float64) {
	right := figW - padR
	emax := 0.0
	for _, p := range pts {
		if e := float64(p.EpsilonSpent); !math.IsInf(e, 0) {
			emax = math.Max(emax, e)
		}
	}
	fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#d62728"/>`+"\n", right, padT, right, figH-padB)
	fmt.Fprintf(b, `<text transform="translate(%g %g) rotate(90)" text-anchor="middle" fill="#d62728">lifetime ε spent</text>`+"\n", figW-16, (padT+figH-padB)/2)
	if emax == 0 {
		fmt.Fprintf(b, `<text x="%g" y="%g" fill="#d62728">∞ (no noise)</text>`+"\n", right+4, padT+12)
		return
	}
	top := emax * 1.1
	ye := func(v float64) float64 { return figH - padB - v/top*(figH-padT-padB) }
	for i := 0; i <= 4; i++ {
		v := emax * float64(i) / 4
		fmt.Fprintf(b, `<text x="%g" y="%.1f" fill="#d62728">%.2g</text>`+"\n", right+4, ye(v)+4, v)
	}
	b.WriteString(`<polyline fill="none" stroke="#d62728" stroke-width="1.5" stroke-dasharray="3 2" points="`)
	for i, p := range pts {
		fmt.Fprintf(b, "%.1f,%.1f ", x(i), ye(float64(p.EpsilonSpent)))
	}
	b.WriteString(`"/>` + "\n")
}

func figureTitle(s Summary) string {
	eps := "ε = ∞"
	if e := float64(s.EpsilonBudget); !math.IsInf(e, 1) {
		eps = fmt.Sprintf("lifetime ε = %g", e)
	}
	return fmt.Sprintf("%s design, %d LHAs, %s: relative WIS %.3f", s.Design, s.LHAs, eps, s.RelativeWIS)
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
