package ui

import (
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// progressEnv records the forecast's progress at every render asked for.
type progressEnv struct {
	sync.RWMutex
	s    *JoinState
	seen []session.Progress
}

func (e *progressEnv) UnlockOnly() { e.Unlock() }
func (e *progressEnv) UnlockRender() {
	if e.s.Forecasting && e.s.ForecastProgress.Areas > 0 {
		e.seen = append(e.seen, e.s.ForecastProgress)
	}
	e.Unlock()
}

// forecastWithProgress forecasts 40 areas with the progress shown at most
// every `every` and returns the progress seen at each render, the state
// after, and how long the forecast took.
func forecastWithProgress(t *testing.T, every time.Duration) ([]session.Progress, *JoinState, time.Duration) {
	t.Helper()
	d, _, err := synth.Generate(synth.Options{Areas: 40, Days: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "progress-test", History: 10, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9}}
	model := make([]float64, 11)
	model[9] = 1
	env := &progressEnv{}
	s := &JoinState{Env: env, Welcome: &protocol.Welcome{Study: st, LHA: "me"}, Data: d, Forecasting: true, progressEvery: every}
	env.s = s
	start := time.Now()
	s.forecast(model)
	return env.seen, s, time.Since(start)
}

// TestForecastProgress: while the page works out the forecast, the
// progress it shows only grows (step, then areas done; the bar's share
// too), counts all 40 areas in every step, and ends at 40 of 40 in the
// last step, the charts drawn here; the progress is rendered at most
// about every 100 ms, not after every area.
func TestForecastProgress(t *testing.T) {
	seen, s, _ := forecastWithProgress(t, time.Nanosecond)
	if s.Forecasting || len(s.Forecasts) != 40 {
		t.Fatalf("forecasting %v, %d forecasts", s.Forecasting, len(s.Forecasts))
	}
	if len(seen) < 2*40 {
		t.Fatalf("%d progress renders with no throttle, want one per area and step", len(seen))
	}
	passes := seen[0].Passes
	var prev session.Progress
	frac := 0.0
	for i, p := range seen {
		s.ForecastProgress = p
		f := s.ForecastFraction()
		if p.Passes != passes || p.Areas != 40 || p.Pass < prev.Pass || p.Pass == prev.Pass && p.Done < prev.Done || f < frac {
			t.Fatalf("render %d: %+v (share %.3f) after %+v (share %.3f)", i, p, f, prev, frac)
		}
		prev, frac = p, f
	}
	if prev.Pass != passes || passes < 2 {
		t.Errorf("the last step shown is %+v, want the charts, step %d of %d", prev, passes, passes)
	}
	final := session.Progress{Pass: passes, Passes: passes, Done: 40, Areas: 40}
	s.ForecastProgress = final
	if got, want := s.ForecastProgressWords(), "Step 5 of 5: 40 of 40 areas done."; got != want || s.ForecastFraction() != 1 {
		t.Errorf("at the end: %q (share %v), want %q", got, s.ForecastFraction(), want)
	}

	seen, s, took := forecastWithProgress(t, 0)
	if s.ForecastProgress != final {
		t.Errorf("after the forecast: %+v, want %+v", s.ForecastProgress, final)
	}
	if most := 1 + int(took/(100*time.Millisecond)); len(seen) > most {
		t.Errorf("%d progress renders in %v, want at most %d (one per 100 ms)", len(seen), took, most)
	}
}

// TestForecastProgressWords: the progress in words, and the bar's share.
func TestForecastProgressWords(t *testing.T) {
	for _, tc := range []struct {
		p     session.Progress
		words string
		share float64
	}{
		{session.Progress{}, "", 0},
		{session.Progress{Pass: 1, Passes: 5, Done: 0, Areas: 500}, "Step 1 of 5: 0 of 500 areas done.", 0},
		{session.Progress{Pass: 3, Passes: 5, Done: 250, Areas: 500}, "Step 3 of 5: 250 of 500 areas done.", 0.5},
		{session.Progress{Pass: 5, Passes: 5, Done: 1200, Areas: 1200}, "Step 5 of 5: 1,200 of 1,200 areas done.", 1},
		{session.Progress{Pass: 1, Passes: 1, Done: 3, Areas: 4}, "3 of 4 areas done.", 0.75},
		{session.Progress{Pass: 2, Passes: 2, Done: 1, Areas: 1}, "Step 2 of 2: 1 of 1 area done.", 1},
	} {
		s := &JoinState{ForecastProgress: tc.p}
		if got := s.ForecastProgressWords(); got != tc.words {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.words)
		}
		if got := s.ForecastFraction(); got != tc.share {
			t.Errorf("%+v: share %v, want %v", tc.p, got, tc.share)
		}
	}
}
