package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
)

// TestDistrictTSV: a per-district file as a widely used open repository
// publishes them (tab-separated, no area column, Cases the running total,
// Cases_New the daily count, deaths and weekly and per-million columns
// beside them) reads as one area named after the file, with the daily
// column, not the running total; a negative Cases_New (a correction of the
// total) counts 0 with a warning. The page shows the right total.
func TestDistrictTSV(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "District study", Epsilon: 3, Rounds: 2, ExpectedClients: 1,
		RoundLength: study.Duration(30 * time.Second)}}, 2)
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))

	var b strings.Builder
	b.WriteString("Date\tCases\tDeaths\tCases_New\tDeaths_New\tCases_Last_Week\tDeaths_Last_Week\tCases_Per_Million\tCases_Last_Week_7Day_Per_100k\n")
	total, daily, running := 0.0, 0.0, 0.0
	start := time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i++ {
		n := float64(20 + (i*37)%90)
		if i == 200 {
			n = -35 // the total was corrected downwards
		}
		running += n
		if n > 0 {
			total += n
		}
		daily = n
		fmt.Fprintf(&b, "%s\t%.0f\t%d\t%.0f\t%d\t%d\t%d\t%.1f\t%.1f\n", start.AddDate(0, 0, i).Format("2006-01-02"),
			running, i/10, daily, i%3, 7*int(daily), 1, running/1.5, daily/15)
	}
	path := filepath.Join(t.TempDir(), "SK_Muenchen.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 30*time.Second, "choosing a per-district TSV",
		chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{path}),
		chromedp.WaitVisible(chromedp.CSS("#data-notices")))
	want := ui.FormatCount(total) + " cases in total"
	if got := text(t, ctx, "#data-ok"); !strings.Contains(got, "1 area") || !strings.Contains(got, want) {
		t.Errorf("file check says %q, want 1 area and %q (the sum of Cases_New, not of the running total %s)", got, want, ui.FormatCount(running))
	}
	if got := text(t, ctx, "#areas"); !strings.Contains(got, "SK_Muenchen") || !strings.Contains(got, ui.FormatCount(total)) {
		t.Errorf("areas table %q", got)
	}
	got := text(t, ctx, "#data-notices")
	for _, w := range []string{"\u201cCases_New\u201d is negative on 1 day, 2020-09-17", "Those days count 0 new cases",
		"\u201cCases_New\u201d was taken"} {
		if !strings.Contains(got, w) {
			t.Errorf("notices lack %q:\n%s", w, got)
		}
	}
	shotOf(t, ctx, "#data", "1-district-tsv")
}
