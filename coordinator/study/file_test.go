package study

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

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
// calibration, which Public and the engine fill): with every field of the
// file set (by reflection, so a new file field is set too), a field of
// the study value left at zero is one the mapping forgot.
func TestFileStudyMappingIsComplete(t *testing.T) {
	var f File
	fill(reflect.ValueOf(&f).Elem())
	engine := map[string]bool{"NoiseMultiplier": true, "NoiseMultipliers": true, "CyclicSeed": true, "TopUps": true,
		"InsecureSeed": true, "ExampleNoiseMultiplier": true, "ExampleSteps": true}
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

// fill sets every exported field of the struct v to a non-zero value.
func fill(v reflect.Value) {
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch x := v.Field(i); x.Kind() {
		case reflect.Struct:
			fill(x)
		case reflect.Bool:
			x.SetBool(true)
		case reflect.Int, reflect.Int64:
			x.SetInt(int64(3 * time.Second)) // a duration of whole milliseconds too
		case reflect.Float64:
			x.SetFloat(0.5)
		case reflect.String:
			x.SetString("x")
		case reflect.Slice:
			x.Set(reflect.MakeSlice(x.Type(), 1, 1))
			if e := x.Index(0); e.Kind() == reflect.Struct {
				fill(e)
			}
		case reflect.Pointer:
			x.Set(reflect.New(x.Type().Elem()))
		}
	}
}

// The public status names the study by its hash, the one every LHA
// computes from its welcome's study value.
func TestStatusShowsStudyHash(t *testing.T) {
	f, raw, _ := small(t, 4)
	seed := uint64(1)
	e, err := Open(f, raw, &MemStore{}, &Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCoordinator(e, DriverOptions{Transport: newFake(4)}, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Status().StudyID
	if want := e.Study.ID(); got != want || len(got) != 64 {
		t.Errorf("status names study %q, the welcome's study has hash %q", got, want)
	}
}

// A study period whose first day is after its last is refused (the LHAs
// would find no day to train on); one day, or one end open, is accepted.
func TestFilePeriodOrder(t *testing.T) {
	f, _, _ := small(t, 4)
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"2021-01-01", "2020-12-01", false},
		{"2020-12-02", "2020-12-01", false},
		{"2020-12-01", "2020-12-01", true},
		{"2020-11-01", "2020-12-01", true},
		{"2021-01-01", "", true},
		{"", "2020-12-01", true},
	} {
		g := *f
		g.From, g.To = c.from, c.to
		err := g.Validate()
		if c.ok != (err == nil) || !c.ok && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "after to")) {
			t.Errorf("from %q to %q: %v, want ok %v", c.from, c.to, err, c.ok)
		}
	}
}
