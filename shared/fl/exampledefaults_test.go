package fl

import "testing"

func TestExampleDefaults(t *testing.T) {
	for _, c := range []struct {
		delta, rate, clip, study float64
		want                     [3]float64
	}{
		{0, 0, 0, 1e-5, [3]float64{1e-5, DefaultExampleSampleRate, DefaultExampleClip}},
		{1e-6, 0.25, 2, 1e-5, [3]float64{1e-6, 0.25, 2}},
		{0, 1, 0, 1e-7, [3]float64{1e-7, 1, DefaultExampleClip}},
	} {
		d, q, s := ExampleDefaults(c.delta, c.rate, c.clip, c.study)
		if got := [3]float64{d, q, s}; got != c.want {
			t.Errorf("ExampleDefaults(%v, %v, %v, %v) = %v, want %v", c.delta, c.rate, c.clip, c.study, got, c.want)
		}
	}
}
