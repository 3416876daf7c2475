package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/shared/forecast"
)

// TestGuardTwoLHAs is issue 25's small study: 2 LHAs at ε = 2. Between
// rounds the browser forecasts this week with the latest released model
// and sends nothing (the tab's own frame log proves it); at the end the
// page headlines no change with the guard's sentence, the shared model's
// forecast beside it, labelled.
func TestGuardTwoLHAs(t *testing.T) {
	ctx := browser(t)
	f := readyStudy("Guard test study", 3, 20*time.Second, 0)
	f.Epsilon = 2
	c := startCoordinator(t, f, 2)
	csv := fixture(t, "lha.csv")
	tr := capture(ctx)
	openJoinLink(t, ctx, c)
	chooseAndJoin(t, ctx, csv)

	// Round 1 released and the round-2 update sent: the next frame would
	// be round 3's update, 20 s away at the earliest.
	binary := func() (n, all int) {
		frames, _ := tr.snapshot()
		for _, f := range frames {
			if f.Opcode == 2 {
				n++
			}
		}
		return n, len(frames)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n, _ := binary(); n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser sent no round-2 update within 90 s")
		}
	}
	within(t, ctx, 10*time.Second, "the forecast button", poll(`!document.getElementById("forecast-now-button").disabled`))
	_, before := binary()
	logBefore := text(t, ctx, "#sent-log")
	within(t, ctx, 15*time.Second, "forecasting this week", chromedp.Click(chromedp.CSS("#forecast-now-button")),
		chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	if _, after := binary(); after != before {
		t.Errorf("the forecast between rounds sent %d frames", after-before)
	}
	if got := text(t, ctx, "#sent-log"); got != logBefore {
		t.Errorf("'What left this computer' changed with the forecast:\n%s\nwas\n%s", got, logBefore)
	}
	if got := text(t, ctx, "#forecast-round"); !strings.Contains(got, "model released after round 1") || !strings.Contains(got, "nothing was sent") {
		t.Errorf("forecast between rounds: %q", got)
	}
	shotOf(t, ctx, "#forecast", "1-forecast-between-rounds")

	c.waitFinished(t, 90*time.Second)
	within(t, ctx, 60*time.Second, "the final forecast", poll(`/Each forecast shown is the no-change forecast/.test((document.getElementById("verdict")||{}).textContent||"") && !document.getElementById("forecast-round")`))
	verdict := text(t, ctx, "#verdict")
	if !strings.Contains(verdict, "Each forecast shown is the no-change forecast") || !strings.Contains(verdict, forecast.TooFewWeeks) {
		t.Errorf("verdict %q: want no change and %q", verdict, forecast.TooFewWeeks)
	}
	if got := text(t, ctx, "#forecast .forecast-value .method"); got != "the no-change forecast" {
		t.Errorf("headline method %q", got)
	}
	if got := text(t, ctx, "#forecast .forecast-model"); !strings.HasPrefix(got, "The shared model's own forecast: ") {
		t.Errorf("model forecast beside the headline: %q", got)
	}
	t.Logf("verdict: %s", verdict)
	shotOf(t, ctx, "#forecast", "2-final-no-change")
}

// chooseAndJoin chooses the CSV on the open join page and presses Join.
func chooseAndJoin(t *testing.T, ctx chromedpCtx, csv string) {
	t.Helper()
	within(t, ctx, 30*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{csv}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), poll(`!document.getElementById("join-button").disabled`))
	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")))
}
