package ui

import (
	"os"
	"strings"
	"testing"
	"time"

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
	s.Welcome = &protocol.Welcome{Study: protocol.Study{Settings: protocol.Settings{From: "2021-02-05", To: "2021-02-12"}}}
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

// TestDataProblemWords: a file that is not text names what it looks like;
// a file that falls short of the study names the days it needs and says
// what to do, with no Go package prefix in what the page shows.
func TestDataProblemWords(t *testing.T) {
	_, err := series.ParseBytes([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "cases.csv")
	p := DataProblem(err)
	if p.Title != "This is not a text (CSV) file" || !strings.Contains(p.Detail, "It looks like a PNG image") {
		t.Errorf("PNG: %+v", p)
	}
	r := &series.Region{Name: "05315", Start: time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), Cases: make([]float64, 120)}
	_, err = series.MakeWindows(&series.Dataset{Regions: []*series.Region{r}}, series.WindowOptions{History: 13, Horizon: 7,
		From: time.Date(2022, 2, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2022, 4, 30, 0, 0, 0, 0, time.UTC)})
	p = DataProblem(err)
	for _, want := range []string{"2022-01-29 to 2022-05-03", "tell your coordinator", "2022-04-27"} {
		if !strings.Contains(p.Fix, want) {
			t.Errorf("coverage fix %q lacks %q", p.Fix, want)
		}
	}
	if !strings.Contains(p.Detail, "2022-05-01 … 2022-05-03") || strings.Contains(p.Detail, "series:") {
		t.Errorf("coverage detail %q", p.Detail)
	}
	fix := studyDaysFix(protocol.Study{Settings: protocol.Settings{From: "2022-02-01", To: "2022-04-30", Smoothing: "centered"}})
	if !strings.Contains(fix, "every day from 2022-01-29 to 2022-05-03") || !strings.Contains(fix, "3 days before and 3 after") {
		t.Errorf("study days fix %q", fix)
	}
}
