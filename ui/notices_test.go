package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// The page shows the reader's notices under the file check: a running
// total converted is a warning and the check no longer says "fine";
// missing days outside the study's from/to are not shown once the study
// is known.
func TestDataNotices(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("../shared/series/testdata/good/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := &JoinState{}
	s.LoadFile("running_total.csv", read("running_total.csv"))
	if s.Data == nil || s.DataProblem != nil {
		t.Fatalf("not read: %+v", s.DataProblem)
	}
	shown := s.ShownNotices()
	if s.DataWarnings() != 2 || len(shown) == 0 || shown[0].Code != series.NoticeRunningTotal || shown[0].Hint == "" {
		t.Errorf("%d warnings, notices %+v", s.DataWarnings(), shown)
	}
	page := &JoinPage{S: s}
	if w := page.dataWords(); !strings.Contains(w, "2 areas") || !strings.Contains(w, "2 warnings") || strings.Contains(w, "fine") {
		t.Errorf("check says %q", w)
	}
	if page.noticeLead(shown[0]) != "Warning: " || page.noticeClass(shown[0]) != "notice notice-warning" {
		t.Errorf("warning shown as %q %q", page.noticeLead(shown[0]), page.noticeClass(shown[0]))
	}

	s.LoadFile("two_periods.csv", read("two_periods.csv"))
	if s.DataWarnings() != 1 {
		t.Fatalf("two periods, no study: %d warnings, want the missing days", s.DataWarnings())
	}
	s.Welcome = &protocol.Welcome{Study: protocol.Study{From: "2021-02-05", To: "2021-02-12"}}
	if s.DataWarnings() != 0 {
		t.Errorf("study inside the second period: %+v", s.ShownNotices())
	}
	s.Welcome.Study.From = "2020-10-05"
	if s.DataWarnings() != 1 {
		t.Errorf("study across the missing days: %+v", s.ShownNotices())
	}
	s.FileError("x.csv", os.ErrNotExist)
	if s.ShownNotices() != nil {
		t.Errorf("notices kept after a failed read")
	}
}
