package ui

import (
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/metrics"
)

func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name        string
		model, base *metrics.Result
		want        []string
		not         []string
	}{
		{"better", &metrics.Result{N: 12, MAE: 8, R2: -3}, &metrics.Result{N: 12, MAE: 10},
			[]string{"On the test days kept out of the training (12 past forecasts, all areas together)", "missed by 8 cases per day", "missed by 10.", "better by 2 cases per day (20 % smaller error)"},
			[]string{"R²", "worse", "do not rely"}},
		{"worse", &metrics.Result{N: 5, MAE: 15.5, R2: 0.99}, &metrics.Result{N: 5, MAE: 10},
			[]string{"worse by 5.5 cases per day", "do not rely on its forecast", "assuming no change is the better guess"},
			[]string{"better by", "followed your cases well"}},
		{"alike", &metrics.Result{N: 5, MAE: 10.1}, &metrics.Result{N: 5, MAE: 10},
			[]string{"about as good as assuming no change"}, []string{"better by", "worse by"}},
		{"no metrics", nil, &metrics.Result{N: 5, MAE: 10}, nil, nil},
		{"no baseline", &metrics.Result{N: 5, MAE: 10}, nil, nil, nil},
		{"undefined", &metrics.Result{N: 5, MAE: math.NaN()}, &metrics.Result{N: 5, MAE: 10}, nil, nil},
	} {
		got := Verdict(tc.model, tc.base)
		if tc.want == nil && got != "" {
			t.Errorf("%s: verdict %q, want none", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: verdict %q lacks %q", tc.name, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: verdict %q contains %q", tc.name, got, w)
			}
		}
	}
}
