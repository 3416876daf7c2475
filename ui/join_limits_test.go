package ui

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

func TestEpsilonLimit(t *testing.T) {
	s := &JoinState{Welcome: &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Epsilon: 3}}}}
	if s.EpsilonLimit() != 3 {
		t.Errorf("default limit %v, want the study's budget 3", s.EpsilonLimit())
	}
	for _, tc := range []struct {
		in      string
		want    float64
		problem string
	}{
		{"1.5", 1.5, ""},
		{"0,5", 0.5, ""},
		{"0", 0.5, "not a privacy limit"},
		{"abc", 0.5, "not a privacy limit"},
		{"NaN", 0.5, "not a privacy limit"},
		{"7", 3, "cannot be above the study's budget"},
	} {
		s.SetMaxEpsilon(tc.in)
		if s.EpsilonLimit() != tc.want || !strings.Contains(s.LimitProblem, tc.problem) || (tc.problem == "") != (s.LimitProblem == "") {
			t.Errorf("%q: limit %v (want %v), problem %q", tc.in, s.EpsilonLimit(), tc.want, s.LimitProblem)
		}
	}
}

// The estimate before joining reads as English whatever its size: "about"
// goes with a figure, not with "less than a tenth of a second".
func TestEstimateWords(t *testing.T) {
	st := protocol.Study{Settings: protocol.Settings{RoundLength: protocol.Duration(20 * time.Second), RoundSlack: protocol.Duration(2 * time.Second)}}
	for _, tc := range []struct {
		est  time.Duration
		want string
	}{
		{20 * time.Millisecond, "One round of training should take less than a tenth of a second on this computer (9 training examples per round)."},
		{1200 * time.Millisecond, "One round of training should take about 1.2 seconds on this computer (9 training examples per round)."},
	} {
		c := &JoinPage{S: &JoinState{Welcome: &protocol.Welcome{Study: st}, RoundEstimate: tc.est, PerRound: 9, Windows: 9}}
		if got := c.estimateWords(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("estimate %v:\n got %q\nwant %q…", tc.est, got, tc.want)
		}
	}
}

func TestUpdateOutcomes(t *testing.T) {
	s := &JoinState{}
	s.RecordSent("hello", 76, 0)
	s.RecordSent("update", 98360, 1)
	s.RecordSent("update", 98360, 2)
	obs := s.Observer()
	obs.Accepted(1)
	obs.Error(&protocol.Error{Code: protocol.CodeStaleRound, Round: 2, Message: "round 2 is closed"})
	obs.Error(&protocol.Error{Code: protocol.CodeStaleRound, Message: "no round: not tied to an update"})
	if s.Sent[0].Outcome != "" || s.Sent[1].Outcome != OutcomeCounted || s.Sent[2].Outcome != OutcomeRefused ||
		!strings.Contains(s.Sent[2].Reason, "after the round had closed") {
		t.Errorf("outcomes %+v", s.Sent)
	}
	c := &JoinPage{S: s}
	if got := c.outcomeWords(s.Sent[2]); !strings.HasPrefix(got, "not counted: it arrived after the round had closed") {
		t.Errorf("shown as %q", got)
	}
	if got := c.messagesWords(); got != "3 messages" {
		t.Errorf("%q", got)
	}
	s.Sent = s.Sent[:1]
	if got := c.messagesWords(); got != "1 message" {
		t.Errorf("%q", got)
	}
	obs.Skipped(session.Skip{Round: 4, Epsilon: 2.5, Limit: 2})
	if len(s.Skips) != 1 || !strings.Contains(c.skipWords(s.Skips[0]), "Round 4: you were picked, but nothing was sent") {
		t.Errorf("skips %+v", s.Skips)
	}
}

// TestInsecureNeedsConsent: joining a research-mode study needs the
// LHA's confirmation; a normal study does not.
func TestInsecureNeedsConsent(t *testing.T) {
	csv, err := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, insecure := range []bool{false, true} {
		st := protocol.Study{Layers: []int{10, 1}, Params: 11,
			InsecureSeed: insecure,
			Settings: protocol.Settings{Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
				TrainFraction: 0.9, LocalEpochs: 3, LearningRate: 0.01, ClipNorm: 1,
				RoundLength: protocol.Duration(60000 * time.Millisecond), RoundSlack: protocol.Duration(6000 * time.Millisecond)}}
		s := &JoinState{Phase: PhaseReady, Welcome: &protocol.Welcome{Study: st}, session: &fakeSession{}}
		s.LoadFile("lha.csv", csv)
		if s.Windows == 0 || s.PerRound != s.Windows || s.RoundEstimate <= 0 || s.WouldMiss() {
			t.Fatalf("check: %d windows, %d per round, estimate %v", s.Windows, s.PerRound, s.RoundEstimate)
		}
		if s.CanJoin() == insecure {
			t.Errorf("insecure %v: can join %v before consent", insecure, s.CanJoin())
		}
		s.InsecureAck = true
		if !s.CanJoin() {
			t.Errorf("insecure %v: cannot join after consent", insecure)
		}
		s.RoundEstimate, s.Welcome.Study.RoundLength, s.Welcome.Study.RoundSlack = 900*time.Millisecond, protocol.Duration(1100*time.Millisecond), protocol.Duration(100*time.Millisecond)
		if !s.WouldMiss() {
			t.Errorf("a 1 ms round does not warn")
		}
	}
}

func TestPaging(t *testing.T) {
	s := &JoinState{}
	for i := range 45 {
		s.Areas = append(s.Areas, AreaSummary{Name: string(rune('A' + i))})
	}
	if s.AreaPages() != 3 || len(s.AreaPageRows()) != 20 {
		t.Fatalf("%d pages", s.AreaPages())
	}
	s.TurnAreaPage(5)
	if s.AreaPage != 2 || len(s.AreaPageRows()) != 5 || s.AreaPageRows()[0].Name != string(rune('A'+40)) {
		t.Errorf("last page %d: %+v", s.AreaPage, s.AreaPageRows())
	}
	s.TurnAreaPage(-9)
	if s.AreaPage != 0 {
		t.Errorf("page %d", s.AreaPage)
	}
}

// TestWatchForNext: after a study has ended, the page offers the next one
// as soon as the public status shows a study that has not ended.
func TestWatchForNext(t *testing.T) {
	states := []string{protocol.StateFinished, protocol.StateFinished, protocol.StateWaiting}
	var asked []string
	s := &JoinState{Link: "http://127.0.0.1:8080/join#tok", watchEvery: time.Millisecond, Fetch: func(ctx context.Context, url, token string) (int, []byte, error) {
		asked = append(asked, url+" "+token)
		b, _ := json.Marshal(protocol.Status{State: states[0]})
		states = states[1:]
		return 200, b, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s.WatchForNext(ctx)
	if !s.NextStudy || len(asked) != 3 || asked[0] != "http://127.0.0.1:8080/api/status " {
		t.Errorf("next %v after %q", s.NextStudy, asked)
	}
}

// TestDemoStart: the dashboard offers the start only when the coordinator
// is a waiting demo, and posts it with the admin token.
func TestDemoStart(t *testing.T) {
	for _, tc := range []struct {
		demo string // answer to GET /api/demo/start; "" for 404 (serve)
		want bool
	}{{`{"waiting":true}`, true}, {`{"waiting":false}`, false}, {"", false}} {
		var posted []string
		s := &AdminState{Base: "http://c", Token: "adm",
			Fetch: func(ctx context.Context, url, token string) (int, []byte, error) {
				switch strings.TrimPrefix(url, "http://c") {
				case "/api/admin/status":
					return 200, []byte(`{"round":0,"rounds":3,"state":"waiting"}`), nil
				case "/api/admin/ledger":
					return 200, []byte(`{"rounds":[]}`), nil
				case DemoStartPath:
					if tc.demo == "" {
						return 404, nil, nil
					}
					return 200, []byte(tc.demo), nil
				}
				return 404, nil, nil
			},
			Post: func(ctx context.Context, url, token string) (int, []byte, error) {
				posted = append(posted, url+" "+token)
				return 204, nil, nil
			}}
		if err := s.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s.DemoWaiting != tc.want {
			t.Errorf("%q: waiting %v", tc.demo, s.DemoWaiting)
		}
		if tc.want {
			s.StartDemo(context.Background())
			if len(posted) != 1 || posted[0] != "http://c/api/demo/start adm" || s.DemoWaiting || s.DemoProblem != "" {
				t.Errorf("start posted %q; waiting %v, problem %q", posted, s.DemoWaiting, s.DemoProblem)
			}
		}
	}
}
