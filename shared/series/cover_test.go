package series

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNeededDays(t *testing.T) {
	d := func(s string) time.Time { v, _ := time.Parse(time.DateOnly, s); return v }
	for _, c := range []struct {
		sm                      Smoothing
		first, last, lastUsable string
	}{
		{Centered, "2022-01-29", "2022-05-03", "2022-04-27"},
		{Trailing, "2022-01-26", "2022-04-30", "2022-04-30"},
	} {
		first, last := NeededDays(WindowOptions{From: d("2022-02-01"), To: d("2022-04-30"), Smoothing: c.sm})
		if got := [2]string{first.Format(time.DateOnly), last.Format(time.DateOnly)}; got != [2]string{c.first, c.last} {
			t.Errorf("%v: needed %v, want %s … %s", c.sm, got, c.first, c.last)
		}
		if got := LastUsableTo(d("2022-04-30"), c.sm).Format(time.DateOnly); got != c.lastUsable {
			t.Errorf("%v: last usable --to %s, want %s", c.sm, got, c.lastUsable)
		}
	}
	if f, l := NeededDays(WindowOptions{}); !f.IsZero() || !l.IsZero() {
		t.Errorf("open window: %v … %v, want zero days", f, l)
	}
}

// TestCoverageErrorSaysWhatToDo: a file that ends on the study's last day
// gets a message naming the same days as NeededDays, and the hint tells
// the LHA to export them or tell its coordinator the last usable end.
func TestCoverageErrorSaysWhatToDo(t *testing.T) {
	r := linearRegion("05315", "2022-01-01", 120) // 2022-01-01 … 2022-04-30
	d := &Dataset{Regions: []*Region{r}}
	from, to := time.Date(2022, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2022, 4, 30, 0, 0, 0, 0, time.UTC)
	_, err := MakeWindows(d, WindowOptions{History: 13, Horizon: 7, From: from, To: to})
	var ce *CoverageError
	if !errors.As(err, &ce) || !errors.Is(err, ErrNotCovered) {
		t.Fatalf("got %v, want a *CoverageError wrapping ErrNotCovered", err)
	}
	for _, want := range []string{"2022-05-01 … 2022-05-03", "needs 2022-01-29 … 2022-05-03"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	h := ce.Hint()
	for _, want := range []string{"2022-01-29 to 2022-05-03", "3 days before and 3 after", "tell your coordinator", "2022-04-27"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint %q lacks %q", h, want)
		}
	}
	ce.NeedLast = ce.DataLast // only early days missing: nothing for the coordinator
	if strings.Contains(ce.Hint(), "coordinator") {
		t.Errorf("hint for missing early days speaks of the coordinator: %q", ce.Hint())
	}
}

// TestForLHA: a gap inside the study period is the LHA's to fix, and
// moving the period is phrased as something to tell the coordinator (the
// study file and simulate's flags are not named).
func TestForLHA(t *testing.T) {
	n := Notice{Code: NoticeMissingDays, Level: Warning, From: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC),
		To: time.Date(2022, 1, 31, 0, 0, 0, 0, time.UTC), Hint: "keep the study period out of them: (in the study file, or --from and --to of fedcast simulate)"}
	h := n.ForLHA().Hint
	for _, want := range []string{"Your file has no rows for 2021-01-01 to 2022-01-31", "export them", "tell your coordinator:"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint %q lacks %q", h, want)
		}
	}
	if strings.Contains(h, "simulate") || strings.Contains(h, "study file") {
		t.Errorf("hint %q names things only the coordinator can change", h)
	}
	info := Notice{Code: NoticeEncoding, Hint: "x"}
	if info.ForLHA().Hint != "x" {
		t.Error("ForLHA changed a notice that is not about days")
	}
}

func TestForLHACorrection(t *testing.T) {
	n := Notice{Code: NoticeCorrection, Hint: correctionHint}
	if h := n.ForLHA().Hint; !strings.Contains(h, "tell your coordinator: the study period should stay away from them.") || strings.Contains(h, "keep the study period") {
		t.Errorf("correction hint for an LHA: %q", h)
	}
}
