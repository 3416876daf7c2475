package ui

import (
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// The chosen file as the page shows it: its areas, one area's plot and
// days, page by page, and what the reader noticed.

// Page sizes of the areas table and of the day preview.
const (
	AreasPerPage   = 20
	PreviewPerPage = 10
)

// AreaSummary describes one area of the chosen file.
type AreaSummary struct {
	Name        string
	First, Last string // dates
	Days        int
	Total       float64
}

// PreviewRow is one day of the selected area.
type PreviewRow struct {
	Date     string
	Cases    string
	Smoothed string
}

// ShownNotices are the file's notices as the page shows them: warnings
// first; once the study is known, warnings about missing or unreported
// days only when
// they fall inside the study's from/to (elsewhere they do no harm).
func (s *JoinState) ShownNotices() []series.Notice {
	if s.Data == nil || len(s.DataNotices) == 0 {
		return nil
	}
	var from, to time.Time
	known := false
	if s.Welcome != nil {
		if f, t, err := session.StudyPeriod(s.Welcome.Study); err == nil {
			from, to, known = f, t, true
		}
	}
	var warn, info []series.Notice
	for _, n := range s.DataNotices {
		switch {
		case n.Level != series.Warning:
			info = append(info, n)
		case n.AboutDays() && known && !n.From.IsZero():
			if (to.IsZero() || !n.From.After(to)) && (from.IsZero() || !n.To.Before(from)) {
				warn = append(warn, n.ForLHA())
			}
		default:
			warn = append(warn, n.ForLHA())
		}
	}
	return append(warn, info...)
}

// DataWarnings counts the warnings among ShownNotices.
func (s *JoinState) DataWarnings() int {
	n := 0
	for _, x := range s.ShownNotices() {
		if x.Level == series.Warning {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// SelectArea shows another area of the file.
func (s *JoinState) SelectArea(name string) {
	s.Area = name
	s.PreviewPage = 0
	s.refreshArea()
}

// AreaPageRows is the current page of the areas table.
func (s *JoinState) AreaPageRows() []AreaSummary {
	from := min(s.AreaPage*AreasPerPage, len(s.Areas))
	return s.Areas[from:min(from+AreasPerPage, len(s.Areas))]
}

// AreaPages is the number of pages of the areas table.
func (s *JoinState) AreaPages() int { return (len(s.Areas) + AreasPerPage - 1) / AreasPerPage }

// PreviewPages is the number of pages of the selected area's days.
func (s *JoinState) PreviewPages() int { return (s.PreviewDays + PreviewPerPage - 1) / PreviewPerPage }

// TurnAreaPage moves the areas table by delta pages (clamped).
func (s *JoinState) TurnAreaPage(delta int) {
	s.AreaPage = max(0, min(s.AreaPages()-1, s.AreaPage+delta))
}

// TurnPreviewPage moves the day preview by delta pages (+1: older days).
func (s *JoinState) TurnPreviewPage(delta int) {
	s.PreviewPage = max(0, min(s.PreviewPages()-1, s.PreviewPage+delta))
	s.refreshArea()
}

// refreshArea rebuilds the plot and preview of the selected area. Call
// with the lock held.
func (s *JoinState) refreshArea() {
	if s.Data == nil {
		return
	}
	r := s.Data.Region(s.Area)
	if r == nil {
		return
	}
	sm := s.smoothing()
	avg := make([]float64, len(r.Cases))
	series.MovingAverage7(avg, r.Cases, sm)
	s.DataChart = casesChart("Reported cases in "+r.Name, "reporting date", "cases per day", r, avg, 0, "7-day average ("+sm.String()+")")
	s.Preview = s.Preview[:0]
	s.PreviewDays = len(r.Cases)
	newest := len(r.Cases) - 1 - s.PreviewPage*PreviewPerPage
	from := max(0, newest-PreviewPerPage+1)
	for i := newest; i >= from; i-- {
		row := PreviewRow{Date: r.Date(i).Format("Mon 2 Jan 2006"), Cases: FormatCount(r.Cases[i]), Smoothed: "not yet known"}
		if !math.IsNaN(avg[i]) {
			row.Smoothed = strconv.FormatFloat(avg[i], 'f', 1, 64)
		}
		s.Preview = append(s.Preview, row)
	}
}

func (s *JoinState) smoothing() series.Smoothing {
	if s.Welcome != nil {
		if sm, err := series.ParseSmoothing(s.Welcome.Study.Smoothing); err == nil {
			return sm
		}
	}
	return series.Centered
}

// casesChart plots an area's days from day from on: the reported counts
// as bars and their 7-day average avg (named smoothName) as a line.
func casesChart(title, xLabel, yLabel string, r *series.Region, avg []float64, from int, smoothName string) *Chart {
	var raw, smooth []Point
	for i := from; i < len(r.Cases); i++ {
		x := Day(r.Date(i))
		raw = append(raw, Point{x, r.Cases[i]})
		smooth = append(smooth, Point{x, avg[i]})
	}
	return &Chart{Title: title, XLabel: xLabel, YLabel: yLabel, Dates: true, Lines: []Line{
		{Name: "reported each day", Class: "raw", Points: raw, Bars: true},
		{Name: smoothName, Class: "smooth", Points: smooth},
	}}
}
