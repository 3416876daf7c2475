package ui

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// TestPagePublish: the page's Publish option makes a marked hub file, the
// same numbers when published again, the figure against the yearly limit
// and the person's total, and refuses to go above the limit.
func TestPagePublish(t *testing.T) {
	PublishStore = nil
	cases := make([]float64, 40)
	for i := range cases {
		cases[i] = float64(20 + i%3)
	}
	s := &JoinState{Data: &series.Dataset{Regions: []*series.Region{{Name: "01001", Start: time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC), Cases: cases}}},
		Welcome: &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{Name: "s", Epsilon: 2}}, LHA: "A"}}
	s.Publish()
	p := &s.Publishing
	if p.Problem != "" || p.Hub == "" || len(p.Lines) != 1 {
		t.Fatalf("nothing published: %q, %v", p.Problem, p.Lines)
	}
	if !strings.Contains(p.Marking, "Published with differential privacy") || !strings.Contains(p.PublishFigureWords(), "yearly limit 1") ||
		!(p.Total > 2.9 && p.Total <= 3) {
		t.Errorf("marking %q, figure %q, total %v", p.Marking, p.PublishFigureWords(), p.Total)
	}
	first := p.Hub
	s.Publish()
	if p.Hub != first || !strings.Contains(p.Lines[0], "published before") {
		t.Errorf("published again: different numbers or not said so:\n%s\n%s\n%v", first, p.Hub, p.Lines)
	}
	s.Data.Regions[0].Cases = append(s.Data.Regions[0].Cases, 25) // a new day
	s.SetPublishLimit("1")
	s.Publish()
	if !strings.Contains(p.Problem, "above your yearly limit") || p.Hub != first {
		t.Errorf("a second day's publication above the limit: problem %q", p.Problem)
	}
	s.SetPublishEpsilon("zero")
	if p.Problem == "" {
		t.Error("a bad ε was accepted")
	}
}

// TestPagePublishStudyModel: for a study of the Lipschitz design the page
// publishes with the study's released model and its marking names the
// model's hash; for another design the marking says the public no-change
// model made the forecast; a Lipschitz study with no model yet publishes
// nothing and says why.
func TestPagePublishStudyModel(t *testing.T) {
	PublishStore = nil
	cases := make([]float64, 40)
	for i := range cases {
		cases[i] = float64(20 + 3*i)
	}
	layers := []int{model.LipschitzHistory, 8, 1}
	mlp := nn.NewMLP(layers...)
	released := make([]float64, mlp.NumParams())
	mlp.Init(released, rand.New(rand.NewPCG(1, 2)))
	mlp.ProjectSpectral(released)
	sha := protocol.HashHex(released)
	page := func(features string, sess Session) *JoinState {
		return &JoinState{Data: &series.Dataset{Regions: []*series.Region{{Name: "01001", Start: time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC), Cases: cases}}},
			Welcome: &protocol.Welcome{Study: protocol.Study{Layers: layers, Settings: protocol.Settings{Name: "s", Epsilon: 2, Features: features, Damping: 0.1}}, LHA: "A"},
			session: sess}
	}
	lip := page("lipschitz", &fakeSession{model: released})
	lip.Publish()
	if p := lip.Publishing; p.Problem != "" || !strings.Contains(p.Marking, sha) || !strings.Contains(p.Marking, "study's shared model") {
		t.Errorf("a Lipschitz study's page: problem %q, marking %q", p.Problem, p.Marking)
	}
	other := page("log-change", &fakeSession{model: released})
	other.Publish()
	if p := other.Publishing; p.Problem != "" || strings.Contains(p.Marking, sha) || !strings.Contains(p.Marking, "no change") {
		t.Errorf("another design's page: problem %q, marking %q", p.Problem, p.Marking)
	}
	early := page("lipschitz", nil)
	early.Publish()
	if p := early.Publishing; !strings.Contains(p.Problem, "no model yet") || p.Hub != "" {
		t.Errorf("a Lipschitz study without a model: problem %q, hub %q", p.Problem, p.Hub)
	}
}

// personalSession is a session with an MR-MTL personal model beside the
// shared one.
type personalSession struct {
	fakeSession
	global []float64
}

func (p *personalSession) GlobalModel() []float64 { return p.global }

// TestPagePublishSharedModelOnly: a session whose forecast model is a
// personal one publishes with the shared released model (its hash in the
// marking), never with the personal model, which is trained on the LHA's
// own counts after the release and so is not covered by the bound; the
// page's words say which model publishes and what the guarantee covers.
func TestPagePublishSharedModelOnly(t *testing.T) {
	PublishStore = nil
	layers := []int{model.LipschitzHistory, 8, 1}
	mlp := nn.NewMLP(layers...)
	global, personal := make([]float64, mlp.NumParams()), make([]float64, mlp.NumParams())
	mlp.Init(global, rand.New(rand.NewPCG(3, 4)))
	mlp.Init(personal, rand.New(rand.NewPCG(5, 6)))
	mlp.ProjectSpectral(global)
	mlp.ProjectSpectral(personal)
	cases := make([]float64, 40)
	for i := range cases {
		cases[i] = float64(30 + i)
	}
	st := protocol.Study{Layers: layers, Settings: protocol.Settings{Name: "s", Epsilon: 2, Features: "lipschitz", Damping: 0.1}}
	s := &JoinState{Data: &series.Dataset{Regions: []*series.Region{{Name: "01001", Start: time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC), Cases: cases}}},
		Welcome: &protocol.Welcome{Study: st, LHA: "A"}, session: &personalSession{fakeSession: fakeSession{model: personal}, global: global}}
	s.Publish()
	if p := s.Publishing; p.Problem != "" || !strings.Contains(p.Marking, protocol.HashHex(global)) || strings.Contains(p.Marking, protocol.HashHex(personal)) {
		t.Errorf("published with the wrong model: problem %q, marking %q", p.Problem, p.Marking)
	}
	for _, c := range []struct {
		features string
		want     string
	}{{"lipschitz", "study's shared model's forecast"}, {"log-change", "public \"no change\" model"}} {
		s.Welcome.Study.Features = c.features
		got := s.PublishIntro()
		for _, w := range []string{c.want, "one reported case", "k times more weakly", "counts as two changes"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the page's words lack %q: %s", c.features, w, got)
			}
		}
	}
}
