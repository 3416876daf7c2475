package study

import (
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/series"
)

// WindowLines says, for the coordinator, which days every LHA's file must
// cover (series.NeededDays: the study period plus the 7-day average's
// margin), as ISO dates, and the last usable --to if the files end on
// --to. study new prints them and serve repeats them at start-up; the
// client and the page name the same days when a file falls short.
func (f *File) WindowLines() []string {
	opt, err := f.WindowOptions()
	if err != nil {
		return []string{"the study period cannot be read: " + err.Error()}
	}
	first, last := series.NeededDays(opt)
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	margin := fmt.Sprintf("the %s 7-day average reads %s each day", opt.Smoothing, opt.Smoothing.Margin())
	switch {
	case first.IsZero() && last.IsZero():
		return []string{"No study period is set (--from, --to): each LHA uses all the days in its own file."}
	case last.IsZero():
		return []string{fmt.Sprintf("Study period from %s (%s): every LHA's file must start on %s or earlier.", day(opt.From), margin, day(first))}
	}
	var lines []string
	if first.IsZero() {
		lines = append(lines, fmt.Sprintf("Study period up to %s (%s): every LHA's file must reach %s.", day(opt.To), margin, day(last)))
	} else {
		lines = append(lines, fmt.Sprintf("Study period %s … %s (%s): every LHA's file must cover %s … %s, so files must reach %s.",
			day(opt.From), day(opt.To), margin, day(first), day(last), day(last)))
	}
	if u := series.LastUsableTo(opt.To, opt.Smoothing); !u.Equal(opt.To) {
		lines = append(lines, fmt.Sprintf("If the files end on %s, the last usable --to is %s.", day(opt.To), day(u)))
	}
	return lines
}
