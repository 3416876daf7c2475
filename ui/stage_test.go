package ui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// timetableSession is a fakeSession with a public schedule.
type timetableSession struct {
	fakeSession
	sch *protocol.Schedule
}

func (s *timetableSession) Schedule() *protocol.Schedule { return s.sch }

func (s *timetableSession) NextRound(now time.Time) (time.Time, time.Time, bool) {
	if s.sch == nil || s.sch.Start == nil {
		return time.Time{}, time.Time{}, false
	}
	l := time.Duration(s.sch.RoundLength)
	opens := *s.sch.Start
	for !opens.After(now) {
		opens = opens.Add(l)
	}
	return opens, opens.Add(l - time.Duration(s.sch.RoundSlack)), true
}

// TestStatusLineOneRound: every part of the status line reads one stage,
// so none names another round than the others, and "waiting for the
// start" never shows while a round is trained or sent (the states of
// issue 23: round 0 released, round 1 trained and sent, no timetable yet).
func TestStatusLineOneRound(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 5}}}
	start := time.Now().Add(-5 * time.Second)
	sch := &protocol.Schedule{Start: &start, RoundLength: protocol.Duration(time.Minute), RoundSlack: protocol.Duration(6 * time.Second)}
	for _, tc := range []struct {
		name  string
		s     JoinState
		stage Stage
		round string // the round every part names ("" none)
	}{
		{"sent before any timetable", JoinState{Status: StatusSent, Round: 0, TrainRound: 1, Step: 30, Steps: 30, session: &fakeSession{}}, StageSent, "1"},
		{"training", JoinState{Status: StatusTraining, Round: 2, TrainRound: 3, Step: 4, Steps: 30, session: &timetableSession{sch: sch}}, StageTraining, "3"},
		{"picked, no step yet", JoinState{Status: StatusSampled, Round: 2, TrainRound: 2, Steps: 30, Step: 30, session: &timetableSession{sch: sch}}, StageTraining, "3"},
		{"waiting to start", JoinState{Status: StatusWaiting, session: &timetableSession{}}, StageStarting, "1"},
		{"between rounds", JoinState{Status: StatusWaiting, Round: 2, TrainRound: 2, Steps: 30, Step: 30, session: &timetableSession{sch: sch}}, StageWaiting, "2"},
		{"sent, released since", JoinState{Status: StatusSent, Round: 3, TrainRound: 3, Steps: 30, Step: 30, session: &timetableSession{sch: sch}}, StageWaiting, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.Phase, s.Welcome = PhaseRunning, w
			c := &JoinPage{S: &s}
			if st, _ := s.RunStage(time.Now()); st != tc.stage {
				t.Fatalf("stage %d, want %d", st, tc.stage)
			}
			line := strings.Join([]string{c.roundWords(), c.statusWords(), c.scheduleWords(), c.trainWords()}, " / ")
			for _, m := range regexp.MustCompile(`[Rr]ounds? (\d+)`).FindAllStringSubmatch(line, -1) {
				if m[1] != tc.round {
					t.Errorf("%q names round %s, want only round %s", line, m[1], tc.round)
				}
			}
			if tc.stage != StageStarting && strings.Contains(line, "when enough authorities") {
				t.Errorf("%q: speaks of the start during a round", line)
			}
			if strings.Contains(line, "Round 0") {
				t.Errorf("%q: round 0", line)
			}
		})
	}
}

// TestTrainedWaitsToSend: training done before the round's set moment
// says so, not "training on your data" beside a full bar.
func TestTrainedWaitsToSend(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 5}}}
	s := &JoinState{Phase: PhaseRunning, Welcome: w, Status: StatusTraining, Round: 2, TrainRound: 3, Step: 29, Steps: 30, session: &fakeSession{}}
	c := &JoinPage{S: s}
	if got := c.statusWords(); got != "training on your data" {
		t.Errorf("step 29 of 30: %q", got)
	}
	s.Step, s.TrainTime = 30, 40*time.Millisecond
	if got := c.statusWords(); got != "trained, waiting to send" {
		t.Errorf("step 30 of 30: %q", got)
	}
	if got := c.trainWords(); !strings.HasPrefix(got, "Local training in round 3: done. It took less than a tenth of a second in this browser. The changes leave at a set moment") {
		t.Errorf("step 30 of 30: %q", got)
	}
}

// TestMissedWords: a page that joined after rounds ran is told which, and
// why that is fine, without claiming its data were not used in them (a
// reloaded page may have trained in them); one that joined during a round's window may still
// take part in it; one that joined before the start missed nothing.
func TestMissedWords(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	sch := &protocol.Schedule{Start: &start, RoundLength: protocol.Duration(time.Minute), RoundSlack: protocol.Duration(6 * time.Second)}
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 5}}}
	for _, tc := range []struct {
		joined time.Duration // after the start
		want   []string
	}{
		{-time.Minute, nil},
		{20 * time.Second, []string{"Round 1 was already under way", "otherwise from round 2 on"}},
		{58 * time.Second, []string{"Round 1 ran before you joined.", "If you did not take part in them earlier (before reloading this page", "cost you no privacy", "You take part from round 2 on."}},
		{150 * time.Second, []string{"Rounds 1 and 2 ran before you joined.", "Round 3 was already under way"}},
		{210 * time.Second, []string{"Rounds 1 to 3 ran before you joined.", "Round 4 was already under way"}},
		{time.Hour, []string{"All 5 rounds ran before you joined", "If you did not take part earlier", "final model's forecast"}},
	} {
		s := &JoinState{Welcome: w, session: &timetableSession{sch: sch}, JoinedAt: start.Add(tc.joined)}
		got := s.MissedWords()
		if tc.want == nil && got != "" {
			t.Errorf("joined at %v: %q, want nothing", tc.joined, got)
		}
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("joined at %v: %q lacks %q", tc.joined, got, want)
			}
		}
	}
}

func TestPluralAndDuration(t *testing.T) {
	if got := Plural(1, "area") + "/" + Plural(0, "area") + "/" + Plural(1200, "area"); got != "1 area/0 areas/1,200 areas" {
		t.Errorf("Plural: %s", got)
	}
	for d, want := range map[time.Duration]string{0: "less than a tenth of a second", 20 * time.Millisecond: "less than a tenth of a second",
		400 * time.Millisecond: "0.4 seconds", time.Second: "1 second", 12 * time.Second: "12 seconds"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestStudyCardFollowsTheStage: once a round runs after Join, the study
// card no longer says the study has not started.
func TestStudyCardFollowsTheStage(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 2}}, State: protocol.StateWaiting}
	s := &JoinState{Phase: PhaseRunning, Welcome: w, Status: StatusSent, TrainRound: 1, session: &fakeSession{}}
	if got := (&JoinPage{S: s}).studyState(); got != "The study is running (0 of 2 rounds done)." {
		t.Errorf("study card during round 1: %q", got)
	}
	s.Status, s.TrainRound = StatusWaiting, 0
	if got := (&JoinPage{S: s}).studyState(); !strings.Contains(got, "not started yet") {
		t.Errorf("study card before round 1: %q", got)
	}
}

// The budget bar's gradient spans the whole track: a quarter spent shows
// only its green quarter.
func TestEpsilonBarStyle(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Epsilon: 2}}}
	for eps, want := range map[float64]string{0: "width: 0.0%", 0.5: "width: 25.0%; background-size: 400.0% 100%", 2: "width: 100.0%; background-size: 100.0% 100%"} {
		c := &JoinPage{S: &JoinState{Welcome: w, Epsilon: eps}}
		if got := c.epsStyle(); got != want {
			t.Errorf("ε = %v of 2: style %q, want %q", eps, got, want)
		}
	}
}

// A page opened after the last round was released (the welcome still says
// running: the finished message comes after it) says the study has ended
// and that the button gets the final model's forecast, not "running" and
// "keep this page open until the study ends".
func TestOpenedAfterLastRound(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 5}}, State: protocol.StateRunning}
	c := &JoinPage{S: &JoinState{Phase: PhaseReady, Welcome: w, Round: 5, session: &fakeSession{}}}
	if got := c.studyState(); !strings.HasPrefix(got, "The study has ended: all 5 rounds are done.") {
		t.Errorf("study card: %q", got)
	}
	if got := c.joinLabel(); got != "Get the forecast" {
		t.Errorf("button: %q", got)
	}
	if got := c.readyWords(); strings.Contains(got, "until the study ends") || !strings.Contains(got, "final model's forecast") {
		t.Errorf("before the button: %q", got)
	}
	c.S.Round = 4
	if got := c.studyState(); got != "The study is running (4 of 5 rounds done)." || c.joinLabel() != "Join the training" {
		t.Errorf("one round to go: %q, %q", got, c.joinLabel())
	}
}

// A page opened on a study stopped before its last round (by its budget
// or its operator: the coordinator's welcome says finished, and rounds
// remain) says it has ended, how many rounds ran, and offers the final
// model's forecast, without this computer's training settings; a study
// that ended before any round offers nothing to press.
func TestOpenedAfterAnEarlyStop(t *testing.T) {
	w := &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Rounds: 10}}, State: protocol.StateFinished}
	s := &JoinState{Phase: PhaseReady, Welcome: w, Round: 3, session: &fakeSession{}}
	c := &JoinPage{S: s}
	if got := c.studyState(); !strings.HasPrefix(got, "The study has ended after 3 of its 10 planned rounds.") || strings.Contains(got, "running") {
		t.Errorf("study card: %q", got)
	}
	if !s.Ended() || c.joinLabel() != "Get the forecast" || c.nothingToForecast() {
		t.Errorf("ended %v, button %q, nothing to forecast %v", s.Ended(), c.joinLabel(), c.nothingToForecast())
	}
	if got := c.readyWords(); strings.Contains(got, "until the study ends") || !strings.Contains(got, "final model's forecast") {
		t.Errorf("before the button: %q", got)
	}
	s.Data, s.Unusable = &series.Dataset{}, &Problem{Title: "unusable"}
	if !s.CanJoin() {
		t.Error("the final model's forecast cannot be asked for")
	}
	s.Round = 0
	if got := c.studyState(); !strings.Contains(got, "before its first round") || !c.nothingToForecast() || s.CanJoin() {
		t.Errorf("no round ran: %q, nothing to forecast %v, can join %v", got, c.nothingToForecast(), s.CanJoin())
	}
	if got := c.readyWords(); strings.Contains(got, "press the button") {
		t.Errorf("no round ran, before the button: %q", got)
	}
	w.State = protocol.StateRunning
	s.Round, s.Unusable = 3, nil
	if s.Ended() || c.joinLabel() != "Join the training" || !strings.HasPrefix(c.studyState(), "The study is running (3 of 10") {
		t.Errorf("running: ended %v, %q, %q", s.Ended(), c.joinLabel(), c.studyState())
	}
}

type fakeJoined struct {
	log      []protocol.Event
	state    string
	finished *protocol.Finished
}

func (f fakeJoined) Study() protocol.Study        { return protocol.Study{} }
func (f fakeJoined) LHA() string                  { return "me" }
func (f fakeJoined) Log() []protocol.Event        { return f.log }
func (f fakeJoined) WelcomeState() string         { return f.state }
func (f fakeJoined) Finished() *protocol.Finished { return f.finished }

// The page's welcome keeps the coordinator's state: a study stopped with
// rounds left is finished, not "running" because rounds were released.
func TestJoinedWelcomeState(t *testing.T) {
	log := []protocol.Event{{Round: 1}, {Round: 2}}
	for _, tc := range []struct {
		name string
		s    fakeJoined
		want string
	}{
		{"stopped early", fakeJoined{log: log, state: protocol.StateFinished}, protocol.StateFinished},
		{"running", fakeJoined{log: log, state: protocol.StateRunning}, protocol.StateRunning},
		{"waiting", fakeJoined{state: protocol.StateWaiting}, protocol.StateWaiting},
		{"finished message read", fakeJoined{log: log, state: protocol.StateRunning, finished: &protocol.Finished{}}, protocol.StateFinished},
		{"no state, rounds released", fakeJoined{log: log}, protocol.StateRunning},
		{"no state, no round", fakeJoined{}, protocol.StateWaiting},
	} {
		if got := joinedWelcome(tc.s).State; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
