package ui

import (
	"strings"
	"testing"
	"time"

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
		Welcome: &protocol.Welcome{Study: protocol.Study{Name: "s", Epsilon: 2}, LHA: "A"}}
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
