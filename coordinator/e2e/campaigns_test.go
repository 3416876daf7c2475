package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
)

// TestContinuingStudy is issue 25's continuing study in the browser: 3
// short campaigns of one round each, 25 s apart, with a browser LHA and a
// simulated one. After each campaign the page shows the lifetime ε spent;
// between campaigns it says when the next starts, and a weekly forecast
// with the latest model sends nothing (the tab's frame log and the page's
// own "What left this computer" both unchanged).
func TestContinuingStudy(t *testing.T) {
	ctx := browser(t)
	f := readyStudy("Continuing test study", 3, 10*time.Second, 0)
	f.Campaigns, f.Every = 3, study.Duration(25*time.Second)
	c := startCoordinator(t, f, 2)
	csv := fixture(t, "lha.csv")
	tr := capture(ctx)
	openJoinLink(t, ctx, c)
	if got := text(t, ctx, "#campaigns"); !strings.Contains(got, "3 training campaigns of 1 round") || !strings.Contains(got, "lifetime budget") {
		t.Errorf("study card: %q", got)
	}
	chooseAndJoin(t, ctx, csv)

	lifetime := regexp.MustCompile(`after campaign (\d), ε = ([0-9.]+)`)
	for k := 1; k <= 2; k++ {
		within(t, ctx, 90*time.Second, "the end of campaign "+itoa(k),
			poll(`((document.getElementById("epsilon-lifetime")||{}).textContent||"").includes("after campaign `+itoa(k)+`,")`),
			poll(`!!document.getElementById("next-campaign")`))
		got := text(t, ctx, "#epsilon-lifetime")
		if m := lifetime.FindAllStringSubmatch(got, -1); len(m) != k || !strings.Contains(got, "planned for all 3 campaigns") {
			t.Errorf("after campaign %d: %q", k, got)
		}
		if got := text(t, ctx, "#next-campaign"); !strings.Contains(got, "Campaign "+itoa(k+1)+" starts on") {
			t.Errorf("between campaigns %d and %d: %q", k, k+1, got)
		}
		if st := c.srv.PublicStatus(); st.Round != k {
			t.Fatalf("after campaign %d the coordinator has released %d rounds", k, st.Round)
		}
		// A weekly forecast between campaigns: nothing leaves the tab.
		frames, _ := tr.snapshot()
		logBefore := text(t, ctx, "#sent-log")
		within(t, ctx, 15*time.Second, "forecasting between campaigns", poll(`!document.getElementById("forecast-now-button").disabled`),
			chromedp.Click(chromedp.CSS("#forecast-now-button")),
			poll(`((document.getElementById("forecast-round")||{}).textContent||"").includes("after round `+itoa(k)+`")`),
			chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
		if after, _ := tr.snapshot(); len(after) != len(frames) {
			t.Errorf("the forecast between campaigns %d and %d sent %d frames", k, k+1, len(after)-len(frames))
		}
		if got := text(t, ctx, "#sent-log"); got != logBefore {
			t.Errorf("'What left this computer' changed with the forecast between campaigns %d and %d", k, k+1)
		}
		shotOf(t, ctx, "#train", "campaign-"+itoa(k)+"-ended")
	}
	c.waitFinished(t, 90*time.Second)
	within(t, ctx, 60*time.Second, "the final forecast", chromedp.WaitVisible(chromedp.CSS("#verdict")))
	if got := text(t, ctx, "#epsilon-lifetime"); len(lifetime.FindAllString(got, -1)) != 3 {
		t.Errorf("after the last campaign: %q", got)
	}
	var e struct {
		Rounds []struct {
			Round, Campaign int
		} `json:"rounds"`
		EpsilonSpent float64 `json:"epsilon_spent"`
	}
	c.adminGet(t, "/api/admin/ledger", &e)
	if len(e.Rounds) != 3 || e.Rounds[2].Campaign != 3 || e.EpsilonSpent > f.Epsilon {
		t.Errorf("ledger export: %+v", e)
	}
	t.Logf("lifetime: %s", text(t, ctx, "#epsilon-lifetime"))
}
