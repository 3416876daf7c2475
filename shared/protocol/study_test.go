package protocol_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/protocol/studytest"
)

// validStudy is a study every check accepts: N=4 LHAs, m=2, H=13 into
// 16 hidden units, 90 s rounds.
func validStudy() protocol.Study {
	return protocol.Study{Protocol: protocol.Version,
		Clients: 4, SampleRate: 0.5, NoiseMultiplier: 1.1,
		Layers: []int{13, 16, 1}, Params: 241,
		Helper: &protocol.Helper{URL: "https://helper.example.org", PublicKey: []byte{1, 2, 3}},
		Settings: protocol.Settings{Name: "Kreise", Epsilon: 2, Delta: 1e-5, Rounds: 5,
			ExpectedClients: 2, ClipNorm: 0.5,
			LocalEpochs: 30, LearningRate: 0.001, History: 13, Horizon: 7, Smoothing: "centered", TrainFraction: 0.9,
			Features: "log-change", Damping: 0.5,
			RoundLength: protocol.Duration(90000 * time.Millisecond), RoundSlack: protocol.Duration(9000 * time.Millisecond), Accountant: "rdp",
			Hidden: []int{16}}}
}

// Every field of the study value is part of its identity: changing any
// one of them (found by reflection, so a new field cannot be forgotten)
// changes the hash.
func TestStudyHashChangesWithEveryField(t *testing.T) {
	base := validStudy()
	id := base.ID()
	if id == "" || len(id) != 64 {
		t.Fatalf("ID %q", id)
	}
	vs := studytest.Variants(base)
	if len(vs) < 40 {
		t.Fatalf("only %d variants: the reflection walk misses fields", len(vs))
	}
	seen := map[string]string{}
	for _, v := range vs {
		got := v.Study.ID()
		if got == id {
			t.Errorf("changing %s leaves the study hash unchanged", v.Field)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("changing %s and changing %s give the same hash", v.Field, other)
		}
		seen[got] = v.Field
	}
	if again := base.ID(); again != id {
		t.Errorf("the variants changed the base study: hash %s, then %s", id, again)
	}
	c := studytest.Clone(base)
	if c.ID() != id {
		t.Errorf("a deep copy has another hash")
	}
}

func TestStudyValidate(t *testing.T) {
	if s := validStudy(); s.Validate() != nil {
		t.Fatalf("valid study refused: %v", s.Validate())
	}
	for _, c := range []struct {
		field string
		mod   func(*protocol.Study)
	}{
		{"local_epochs", func(s *protocol.Study) { s.LocalEpochs = 200000 }},
		{"local_epochs", func(s *protocol.Study) { s.LocalEpochs = 0 }},
		{"layers", func(s *protocol.Study) { s.Layers, s.Params = []int{13, 4097, 1}, 13*4097+4097+4098 }},
		{"history", func(s *protocol.Study) { s.History, s.Layers = 4097, []int{4097, 1} }},
		{"layers", func(s *protocol.Study) { s.Layers = []int{12, 16, 1} }},
		{"params", func(s *protocol.Study) { s.Params = 240 }},
		{"layers", func(s *protocol.Study) { s.Outputs = 7 }}, // a quantile head's settings, one output in the layers
		{"layers", func(s *protocol.Study) { s.Layers, s.Params = []int{13, 16, 7}, 343 }},
		{"layers", func(s *protocol.Study) { s.Hidden = []int{17} }},
		{"noise_schedule", func(s *protocol.Study) { s.NoiseSchedule = "linear:x" }},
		{"noise_schedule", func(s *protocol.Study) {
			s.Privacy, s.ExampleEpsilon, s.Epsilon, s.NoiseSchedule = "example", 1, 0, "linear:0.5"
		}},
		{"epsilon", func(s *protocol.Study) { s.Epsilon = 0 }},
		{"epsilon", func(s *protocol.Study) { s.Privacy, s.ExampleEpsilon = "example", 1 }},
		{"delta", func(s *protocol.Study) { s.Delta = 0.3 }},
		{"accountant", func(s *protocol.Study) { s.Accountant = "moments" }},
		{"clip_norm", func(s *protocol.Study) { s.ClipNorm = -1 }},
		{"noise_multiplier", func(s *protocol.Study) { s.NoiseMultipliers = []float64{1, -2} }},
		{"strategy", func(s *protocol.Study) { s.Strategy = "gossip" }},
		{"expected_clients", func(s *protocol.Study) { s.ExpectedClients = 5 }},
		{"expected_clients", func(s *protocol.Study) { s.Strategy = "cyclic" }},
		{"sample_rate", func(s *protocol.Study) { s.SampleRate = 0.4 }},
		{"clients", func(s *protocol.Study) { s.Clients = 0 }},
		{"learning_rate", func(s *protocol.Study) { s.LearningRate = 0 }},
		{"damping", func(s *protocol.Study) { s.Damping = 2 }},
		{"features", func(s *protocol.Study) { s.Features = "squares" }},
		{"horizon", func(s *protocol.Study) { s.Horizon = 0 }},
		{"smoothing", func(s *protocol.Study) { s.Smoothing = "" }},
		{"train_fraction", func(s *protocol.Study) { s.TrainFraction = 1.5 }},
		{"from", func(s *protocol.Study) { s.From = "2020-13-01" }},
		{"round_length", func(s *protocol.Study) { s.RoundLength = protocol.Duration(10 * time.Millisecond) }},
		{"round_slack", func(s *protocol.Study) { s.RoundSlack = protocol.Duration(50 * time.Second) }},
		{"rounds", func(s *protocol.Study) { s.Rounds = 0 }},
		{"rounds", func(s *protocol.Study) { s.Campaigns, s.Every = 2, protocol.Duration(1e9*time.Millisecond) }},
		{"every", func(s *protocol.Study) { s.Rounds, s.Campaigns, s.Every = 4, 2, protocol.Duration(90*time.Second) }},
		{"every", func(s *protocol.Study) { s.Every = protocol.Duration(1e9 * time.Millisecond) }},
		{"every", func(s *protocol.Study) { s.Campaigns, s.Every = 1, protocol.Duration(-time.Hour) }},
		{"public_inputs", func(s *protocol.Study) {
			w := model.WeeklyDesign.Weekly
			s.Features, s.Weekly, s.History, s.Smoothing = string(model.WeeklyTotal), w, w.Inputs(), "trailing"
			s.Layers, s.Params = []int{w.Inputs(), 1}, w.Inputs()+1
		}},
	} {
		s := validStudy()
		c.mod(&s)
		err := s.Validate()
		var se *protocol.StudyError
		if !errors.As(err, &se) || !errors.Is(err, protocol.ErrStudy) {
			t.Errorf("%s: error %v, want a *StudyError", c.field, err)
			continue
		}
		if se.Field != c.field || !strings.HasPrefix(se.Problem, c.field+" ") {
			t.Errorf("error for field %q, want %q: %v", se.Field, c.field, err)
		}
	}
}

// A quantile head (Settings.Outputs 7) is a study whose layers end in 7
// outputs; a weekly design's head must match its settings.
func TestStudyQuantileHeadLayout(t *testing.T) {
	s := validStudy()
	s.Outputs, s.Layers, s.Params = 7, []int{13, 16, 7}, 343
	if err := s.Validate(); err != nil {
		t.Fatalf("quantile head refused: %v", err)
	}
	w := *model.WeeklyDesign.Weekly
	w.Quantiles = "head"
	s.Features, s.Weekly, s.History, s.Smoothing = string(model.WeeklyTotal), &w, w.Inputs(), "trailing"
	s.PublicInputs = []protocol.PublicInput{{Name: protocol.PublicTotals, Source: "test", SHA256: strings.Repeat("ab", 32), Bytes: 100}}
	s.Layers, s.Params = []int{w.Inputs(), 16, 7}, w.Inputs()*16+16+16*7+7
	if err := s.Validate(); err != nil {
		t.Fatalf("weekly quantile head refused: %v", err)
	}
	s.Outputs = 0
	var se *protocol.StudyError
	if err := s.Validate(); !errors.As(err, &se) || se.Field != "outputs" {
		t.Errorf("a weekly head with outputs 0: %v, want an error for outputs", err)
	}
}

// The slack rule: a tenth of the round, which Validate accepts.
func TestDefaultRoundSlack(t *testing.T) {
	s := validStudy()
	s.RoundSlack = protocol.Duration(protocol.DefaultRoundSlack(time.Duration(s.RoundLength)))
	if s.RoundSlack != protocol.Duration(9*time.Second) || s.Validate() != nil {
		t.Errorf("slack %v: %v", s.RoundSlack, s.Validate())
	}
}

func ExampleStudy_ID() {
	s := protocol.Study{Settings: protocol.Settings{Name: "Kreise", Rounds: 5}}
	moved := s
	moved.Horizon = 14
	fmt.Println(len(s.ID()), s.ID() == moved.ID())
	// Output: 64 false
}

// Validate judges any study a welcome can carry without panicking, and a
// study it accepts encodes (it has a hash).
func FuzzStudyValidate(f *testing.F) {
	s := validStudy()
	b, _ := json.Marshal(s)
	f.Add(b)
	f.Add([]byte(`{"layers":[1e9,1],"history":1000000000,"params":-1}`))
	f.Add([]byte(`{"rounds":7,"campaigns":3,"every":"2562047h47m16.854775807s","round_length":"2562047h47m16.854775807s"}`))
	f.Add([]byte(`{"features":"weekly-total","weekly":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s protocol.Study
		if json.Unmarshal(b, &s) != nil {
			return
		}
		if s.Validate() == nil && s.ID() == "" {
			t.Fatalf("a valid study has no hash: %s", b)
		}
	})
}
