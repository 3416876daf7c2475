package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// TestLocalDPSGDStudy: a study with MR-MTL and privacy "both" in Chromium.
// The page trains with local DP-SGD in the browser (and the simulated LHA
// natively), shows the LHA's own example-level budget before and after
// training with what it spent, and ends with the forecast from the LHA's
// personal model.
func TestLocalDPSGDStudy(t *testing.T) {
	ctx := browser(t)
	tmpl := study.File{StrategyParams: protocol.StrategyParams{Strategy: "mrmtl", Lambda: 1, Privacy: "both", ExampleEpsilon: 5},
		Settings: protocol.Settings{Name: "Local DP-SGD study", Epsilon: 10, Rounds: 3, ExpectedClients: 2, Hidden: []int{16}, LocalEpochs: 10,
			RoundLength: study.Duration(4 * time.Second)}}
	c := startCoordinatorWith(t, tmpl, 2, nil)

	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)))
	within(t, ctx, 60*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "lha.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#round-estimate")))
	within(t, ctx, 10*time.Second, "joining", poll(`!document.getElementById("join-button").disabled`),
		chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	within(t, ctx, 30*time.Second, "the example-level budget is shown", chromedp.WaitVisible(chromedp.CSS("#epsilon-limit")),
		poll(`document.getElementById("epsilon-limit").textContent.includes("example-level budget is ε = 5")`))
	shot(t, ctx, "1-dpsgd-budget")
	c.waitFinished(t, 120*time.Second)
	within(t, ctx, 60*time.Second, "the end", chromedp.WaitVisible(chromedp.CSS("#forecast")))
	words := text(t, ctx, "#epsilon-limit")
	if !strings.Contains(words, "example-level budget is ε = 5") || !strings.Contains(words, "training steps") || strings.Contains(words, "spent ε = 0 ") {
		t.Errorf("budget words after training: %q", words)
	}
	if !strings.Contains(words, "of 30 training steps") {
		t.Errorf("the budget covers E·T = 30 steps: %q", words)
	}
	if log := text(t, ctx, "#sent-log"); !strings.Contains(log, "round 1:") {
		t.Errorf("no update sent in round 1:\n%s", log)
	}
	shot(t, ctx, "2-dpsgd-end")
}
