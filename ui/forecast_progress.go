package ui

import (
	"fmt"
	"time"

	"github.com/fedcast/fedcast/shared/session"
)

// How far the forecast has got: with hundreds of areas, working out the
// forecast takes seconds in a browser, and a page that shows nothing
// meanwhile looks stuck.

// progressShower returns the function that shows the forecast's progress
// (ForecastProgress). It asks for a render at the first report and then
// at most every 100 ms (progressEvery), or nine times as long as the last
// of these renders took when that is longer, so that rendering takes at
// most about a tenth of the time: the reports come after every area, and
// the page is large by then (a render of the ten-year, 500-area file's
// page takes about 30 ms in Chromium). With Progress's rule for training
// (four times), the forecast of that file took 5.5 s instead of 4.4 s.
// Its state is its own, so two forecasts at once (one asked for just as
// the study ended) cannot race on it.
func (s *JoinState) progressShower() func(session.Progress) {
	every := s.progressEvery
	if every == 0 {
		every = 100 * time.Millisecond
	}
	var shown time.Time
	var cost time.Duration
	return func(p session.Progress) {
		now := time.Now()
		if !shown.IsZero() && now.Sub(shown) < max(every, 9*cost) {
			return
		}
		s.publish(func() { s.ForecastProgress = p })
		shown = time.Now()
		cost = shown.Sub(now)
	}
}

// ForecastFraction is the share of the forecast's work done, for its
// progress bar: each pass over the areas counts alike.
func (s *JoinState) ForecastFraction() float64 {
	p := s.ForecastProgress
	if p.Passes == 0 || p.Areas == 0 {
		return 0
	}
	return (float64(p.Pass-1) + float64(p.Done)/float64(p.Areas)) / float64(p.Passes)
}

// ForecastProgressWords says how far the forecast has got: "Step 3 of 5:
// 212 of 500 areas done." ("" before the first report). The page goes
// through the areas once per step (the model's forecasts, no change's,
// the weeks held out of training, the test days, the charts), so the
// count of areas starts again at each step.
func (s *JoinState) ForecastProgressWords() string {
	p := s.ForecastProgress
	if p.Areas == 0 {
		return ""
	}
	done := fmt.Sprintf("%s of %s areas done.", FormatCount(float64(p.Done)), FormatCount(float64(p.Areas)))
	if p.Areas == 1 {
		done = fmt.Sprintf("%s of 1 area done.", FormatCount(float64(p.Done)))
	}
	if p.Passes <= 1 {
		return done
	}
	return fmt.Sprintf("Step %d of %d: %s", p.Pass, p.Passes, done)
}
