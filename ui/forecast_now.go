package ui

import (
	"math"

	"github.com/fedcast/fedcast/shared/forecast"
)

// MethodWords names the method of the forecast shown, to follow "by":
// "the shared model" or "the no-change forecast" (not the bare method
// names, which read as jargon in "…, by no change.").
func (f Forecast) MethodWords() string {
	switch f.Guard.Method {
	case forecast.MethodModel:
		return "the shared model"
	case forecast.MethodNoChange:
		return "the no-change forecast"
	}
	return string(f.Guard.Method)
}

// ModelWords shows the shared model's own forecast beside the headline,
// labelled, and flagged when the guard held it inside the plausible band.
func (f Forecast) ModelWords() string {
	g := f.Guard
	if g.ModelClamped {
		return "The shared model's own forecast: " + FormatCount(g.Model) + " (flagged: beyond any change in your own history, held at " + FormatCount(g.ModelShown) + ")."
	}
	return "The shared model's own forecast: about " + FormatCount(math.Max(0, g.Model)) + " new cases per day."
}

// CanForecastNow is true while the study runs and a model has been
// released: the LHA may forecast this week with it at no privacy cost.
func (s *JoinState) CanForecastNow() bool {
	return s.Phase == PhaseRunning && s.Round > 0 && !s.Forecasting && s.session != nil
}

// ForecastNow forecasts this week with the latest released model, under
// the guard, in this browser: nothing is sent (the session already holds
// the model the coordinator released; no frame is written).
func (s *JoinState) ForecastNow() {
	if !s.CanForecastNow() {
		return
	}
	s.Forecasting = true
	s.ForecastRound = s.Round
	sess := s.session
	go func() { s.forecast(sess.Model()) }()
}
