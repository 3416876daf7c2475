package study

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// The study file and the LHAs apply the same bounds: a file the
// coordinator accepts gives a study value every LHA accepts, and a
// parameter just past a bound is refused by both, naming the field.
func TestFileAndLHAShareTheBounds(t *testing.T) {
	f, _, _ := small(t, 4)
	c, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Public(c, false); st.Validate() != nil {
		t.Fatalf("the LHAs would refuse a valid file's study: %v", st.Validate())
	}
	for _, b := range []struct {
		field string
		mod   func(*File)
	}{
		{"local_epochs", func(f *File) { f.LocalEpochs = protocol.MaxLocalEpochs + 1 }},
		{"local_epochs", func(f *File) { f.LocalEpochs = 200000 }},
		{"layers", func(f *File) { f.Hidden = []int{protocol.MaxWidth + 1} }},
		{"history", func(f *File) { f.History = protocol.MaxWidth + 1 }},
		{"horizon", func(f *File) { f.Horizon = -1 }},
	} {
		g := *f
		b.mod(&g)
		err := g.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), b.field) {
			t.Errorf("file with %s past its bound: %v", b.field, err)
		}
		var se *protocol.StudyError
		if st := g.study(); !errors.As(st.Validate(), &se) || se.Field != b.field {
			t.Errorf("LHA check of %s past its bound: %v", b.field, st.Validate())
		}
	}
	at := *f
	at.LocalEpochs, at.Hidden = protocol.MaxLocalEpochs, []int{protocol.MaxWidth}
	if err := at.Validate(); err != nil {
		t.Errorf("bounds themselves refused: %v", err)
	}
}

// The file's mapping to the study value (File.study) sets every field of
// protocol.Study except those the engine adds (c, its schedule, the
// cyclic seed, the top-ups, the insecure seed flag and local DP-SGD's
// calibration, which Public and the engine fill): a field added to the
// study value and forgotten in the mapping fails here.
func TestFileStudyMappingIsComplete(t *testing.T) {
	f, _, _ := small(t, 4)
	f.From, f.To, f.Features, f.Damping, f.Campaigns, f.Every = "2020-01-01", "2020-12-31", "log-change", 0.5, 2, Duration(1e12)
	f.Rounds = 6
	f.StrategyParams = protocol.StrategyParams{Strategy: "mrmtl", Lambda: 0.1}
	f.Helper = &HelperRef{URL: "https://h.example.org"}
	f.PublicInputs = []PublicFile{{PublicInput: protocol.PublicInput{Name: protocol.PublicHolidays}}}
	f.Weekly = nil
	engine := map[string]bool{"NoiseMultiplier": true, "NoiseSchedule": true, "CyclicSeed": true, "TopUps": true,
		"InsecureSeed": true, "ExampleNoiseMultiplier": true, "ExampleSteps": true, "Weekly": true,
		"Privacy": true, "ExampleEpsilon": true, "ExampleDelta": true, "ExampleRate": true, "ExampleClip": true}
	st := f.study()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if v.Type().Field(i).Anonymous {
				walk(v.Field(i))
				continue
			}
			if v.Field(i).IsZero() && !engine[name] {
				t.Errorf("File.study leaves protocol.Study.%s unset", name)
			}
		}
	}
	walk(reflect.ValueOf(st))
}
