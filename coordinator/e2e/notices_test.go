package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// seriesFixture is a case file of the series package's tests.
func seriesFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "shared", "series", "testdata", "good", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFileNotices: the page shows the reader's warnings and notes under
// the file check, in the same words as `fedcast data check`: a running
// total turned into daily counts is a warning, and a German Excel file
// (Windows-1252, day.month.year) reads with its umlauts.
func TestFileNotices(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "Notices study", Epsilon: 3, Rounds: 2, ExpectedClients: 1,
		RoundLength: study.Duration(30 * time.Second)}}, 2)
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))

	within(t, ctx, 30*time.Second, "choosing a file of running totals",
		chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{seriesFixture(t, "running_total.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#data-notices")))
	if got := text(t, ctx, "#data-ok"); !strings.Contains(got, "2 areas") || !strings.Contains(got, "2 warnings") || strings.Contains(got, "fine") {
		t.Errorf("file check says %q", got)
	}
	got := text(t, ctx, "#data-notices")
	for _, want := range []string{"Warning: The column \u201ccases\u201d holds a running total", "taking the difference",
		"Warning: The running total falls on 1 day", "Dates come from the column \u201cdate\u201d"} {
		if !strings.Contains(got, want) {
			t.Errorf("notices lack %q:\n%s", want, got)
		}
	}
	shotOf(t, ctx, "#data", "1-running-total")

	// German Excel "CSV": Windows-1252 (ü is one byte, 0xFC), semicolons,
	// day.month.year, 40 days for two areas.
	var b strings.Builder
	b.WriteString("Datum;Landkreis;F\xe4lle\r\n")
	for _, area := range []string{"M\xfcnchen", "F\xfcrth"} {
		for i := 0; i < 40; i++ {
			d := time.Date(2020, 11, 1+i, 0, 0, 0, 0, time.UTC)
			b.WriteString(d.Format("02.01.2006") + ";" + area + ";" + itoa(10+i%7) + "\r\n")
		}
	}
	german := filepath.Join(t.TempDir(), "faelle.csv")
	if err := os.WriteFile(german, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 30*time.Second, "choosing a German Excel file",
		chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{german}),
		poll(`document.getElementById("data-ok") && document.getElementById("data-ok").textContent.includes("fine")`))
	got = text(t, ctx, "#data")
	for _, want := range []string{"München", "Fürth", "Windows-1252", "day.month.year", "1 November 2020"} {
		if !strings.Contains(got, want) {
			t.Errorf("data card lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(text(t, ctx, "#data-notices"), "Warning") {
		t.Errorf("warnings for a clean German file")
	}
	shotOf(t, ctx, "#data", "2-german-excel")
}
