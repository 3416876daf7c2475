package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestBadCSV: a file with a negative count is refused with its line,
// column and a fix; dropping a good file on the drop zone then works.
func TestBadCSV(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "Bad file study", Epsilon: 3, Rounds: 2, ExpectedClients: 1,
		RoundLength: study.Duration(30 * time.Second)}}, 2)
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))
	within(t, ctx, 30*time.Second, "choosing the bad CSV",
		chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "bad.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#data-problem")))
	got := text(t, ctx, "#data-problem")
	for _, want := range []string{"A case count is negative", "line 15, column 3 (cases)", `"-4"`, "How to fix it"} {
		if !strings.Contains(got, want) {
			t.Errorf("error message lacks %q:\n%s", want, got)
		}
	}
	if dis, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#join-button"), "disabled")); err != nil || !dis.Exists {
		t.Errorf("join button enabled with a bad file (%v)", err)
	}
	shot(t, ctx, "1-bad-file")
	shotOf(t, ctx, "#data", "1-bad-file-card")

	// Drop the good file on the drop zone (a DataTransfer built in the page,
	// as the browser builds it for a real drag from the file manager).
	good, err := os.ReadFile(fixture(t, "lha.csv"))
	if err != nil {
		t.Fatal(err)
	}
	drop := `(() => {
		const dt = new DataTransfer();
		dt.items.add(new File([` + jsString(string(good)) + `], "lha.csv", {type: "text/csv"}));
		const z = document.getElementById("dropzone");
		z.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
		z.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
		return true;
	})()`
	within(t, ctx, 30*time.Second, "dropping the good CSV", void(chromedp.Evaluate[bool](drop)),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), chromedp.WaitNotPresent(chromedp.CSS("#data-problem")))
	if dis, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#join-button"), "disabled")); err != nil || dis.Exists {
		t.Errorf("join button still disabled after a good file (%v)", err)
	}
	shot(t, ctx, "2-dropped-good-file")
}
