package ui

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/forecast"
)

func TestGuardWords(t *testing.T) {
	few := forecast.Guard(forecast.Judge(nil), 113577, 760, forecast.Band{Lo: 300, Hi: 1500})
	model := forecast.Headline{Judgement: forecast.Judgement{Method: forecast.MethodModel, Origins: 9, ModelMAE: 10, NoChangeMAE: 20}, Value: 800, Model: 800, ModelShown: 800}
	for _, tc := range []struct {
		name string
		fs   []Forecast
		want []string
		not  []string
	}{
		{"too few weeks, absurd model", []Forecast{{Guard: few}}, []string{"Each forecast shown is the no-change forecast (today's 7-day average).", forecast.TooFewWeeks, "113,577", "held at 1,500"}, []string{"Each forecast shown is the shared model", "headline"}},
		{"model earned it", []Forecast{{Guard: model}}, []string{"Each forecast shown is the shared model's.", "Over the last 9 weeks", "the shared model missed by 10"}, []string{forecast.TooFewWeeks}},
		{"mixed", []Forecast{{Area: "A", Guard: model}, {Area: "B", Guard: few}, {Area: "C", Guard: few}},
			[]string{"The forecast shown is the shared model's for 1 area and the no-change forecast (today's 7-day average) for the other 2.", "In A, for example, over the last 9 weeks", "for 2 areas: held inside it and flagged"}, []string{"headline"}},
		// With several areas the first area's figures are named as its
		// own, and its clamped forecast is counted, not quoted as the file's.
		{"many areas, absurd model", []Forecast{{Area: "01001", Guard: few}, {Area: "01002", Guard: few}},
			[]string{"Each forecast shown is the no-change forecast", "In 01001, for example, there are " + forecast.TooFewWeeks, "for 2 areas: held inside it and flagged"}, []string{"113,577"}},
	} {
		got := GuardWords(tc.fs)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", tc.name, got, w)
			}
		}
	}
	f := Forecast{Guard: few}
	if f.MethodWords() != "the no-change forecast" || !strings.Contains(f.ModelWords(), "flagged") {
		t.Errorf("%q / %q", f.MethodWords(), f.ModelWords())
	}
}
