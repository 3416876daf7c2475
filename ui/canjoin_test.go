package ui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// TestCanJoinDependsOnlyOnParsing is issue 23's "Ready depends only on a
// file having been chosen and parsed, never on what is in it": a file the
// study can use, a file too short for it and a file that ends before the
// study's days all let the LHA join (the last two present only, with a
// plain-words reason and what to do); a file that does not parse does not.
func TestCanJoinDependsOnlyOnParsing(t *testing.T) {
	csv, err := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	days := func(n int) string { return strings.Join(strings.SplitAfter(string(csv), "\n")[:n+1], "") } // n days of one area
	short := days(5)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
	open := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "t", Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
			TrainFraction: 0.9, LearningRate: 0.01, LocalEpochs: 2}}
	windowed := open
	windowed.From, windowed.To = "2020-11-01", "2020-12-31" // lha.csv ends on 2020-12-31
	for _, tc := range []struct {
		name     string
		study    protocol.Study
		file     string
		canJoin  bool
		unusable bool
		words    []string // in the reason or what to do
	}{
		{"usable", open, string(csv), true, false, nil},
		// H + P + 6 for the average + 2 windows (the earliest 90 % of 1
		// window, rounded down, is none).
		{"just long enough", open, days(10 + 7 + 6 + 2), true, false, nil},
		{"one day too short", open, days(10 + 7 + 6 + 1), true, true, []string{"Area Northfield has 24 days", "at least 25 days in a row", "Export more days"}},
		{"too short", open, short, true, true, []string{"Export more days", "tell your coordinator"}},
		{"ends on the study's last day", windowed, string(csv), true, true, []string{"2021-01-03", "tell your coordinator", "can end on 2020-12-28"}},
		{"not a CSV file", open, png, false, false, nil},
	} {
		s := &JoinState{Phase: PhaseReady, session: &fakeSession{}, Welcome: &protocol.Welcome{Study: tc.study, LHA: "me", State: protocol.StateWaiting}}
		s.LoadFile("cases.csv", []byte(tc.file))
		if got := s.CanJoin(); got != tc.canJoin {
			t.Errorf("%s: CanJoin %v, want %v (problem %+v, unusable %+v)", tc.name, got, tc.canJoin, s.DataProblem, s.Unusable)
		}
		if (s.Unusable != nil) != tc.unusable {
			t.Errorf("%s: unusable %+v", tc.name, s.Unusable)
		}
		c := &JoinPage{S: s}
		switch {
		case tc.unusable:
			words := s.Unusable.Title + " " + s.Unusable.Detail + " " + s.Unusable.Fix
			for _, w := range tc.words {
				if !strings.Contains(words, w) {
					t.Errorf("%s: the reason lacks %q: %s", tc.name, w, words)
				}
			}
			if strings.Contains(words, "series:") || strings.Contains(words, "session:") {
				t.Errorf("%s: a Go package prefix in %q", tc.name, words)
			}
			if c.joinLabel() != "Join as present only" || !strings.Contains(c.dataWords(), "cannot use it") {
				t.Errorf("%s: button %q, file line %q", tc.name, c.joinLabel(), c.dataWords())
			}
		case tc.canJoin:
			if c.joinLabel() != "Join the training" || s.Windows == 0 || s.DataProblem != nil {
				t.Errorf("%s: button %q, %d windows, problem %+v", tc.name, c.joinLabel(), s.Windows, s.DataProblem)
			}
		default:
			if s.DataProblem == nil || s.Data != nil {
				t.Errorf("%s: problem %+v", tc.name, s.DataProblem)
			}
		}
	}
}

// TestJoinPresentOnly: joining with a file the study cannot use runs the
// session (it says ready and answers with stand-ins), and the page says so
// in the status line and the list of what left this computer.
func TestJoinPresentOnly(t *testing.T) {
	csv, _ := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	st := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "t", Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
			TrainFraction: 0.9, From: "2020-11-01", To: "2020-12-31"}}
	ran := make(chan struct{})
	sess := &runFunc{run: func(obs session.Observer) {
		obs.Sent(session.Outgoing{Type: "ready"})
		obs.State(session.StateWaiting)
		obs.Sent(session.Outgoing{Type: "dummy", Round: 1, Bytes: int(protocol.FrameSize(11))})
		close(ran)
	}}
	s := &JoinState{Phase: PhaseReady, session: sess, Welcome: &protocol.Welcome{Study: st, LHA: "me", State: protocol.StateWaiting}}
	s.LoadFile("lha.csv", csv)
	if !s.CanJoin() || s.Unusable == nil {
		t.Fatalf("cannot join present only: problem %+v", s.DataProblem)
	}
	s.Join(context.Background())
	defer s.Close()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("Join did not run the session")
	}
	c := &JoinPage{S: s}
	if !s.PresentOnly || !strings.Contains(c.trainWords(), "present only") {
		t.Errorf("present only %v, training line %q", s.PresentOnly, c.trainWords())
	}
	if n := len(s.Sent); n < 2 || !strings.Contains(s.Sent[n-1].What, "the study cannot use your file") {
		t.Errorf("sent log %+v", s.Sent)
	}
}

// runFunc is a Session whose Run calls run and then waits for the end.
type runFunc struct{ run func(session.Observer) }

func (f *runFunc) Run(ctx context.Context, _ *series.Dataset, obs session.Observer) error {
	f.run(obs)
	<-ctx.Done()
	return ctx.Err()
}
func (f *runFunc) Model() []float64 { return nil }
func (f *runFunc) Close() error     { return nil }
