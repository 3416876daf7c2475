package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/series"
)

// checkPagePublish uses the page's Publish option after the forecast:
// the forecast to publish in words with its DP marking and the figure
// against the yearly limit, a downloaded hub file with every area and its
// marking file; the words on what the guarantee covers and which model
// publishes (this study's default design: the public no-change model);
// the same numbers when published again.
func checkPagePublish(t *testing.T, ctx chromedpCtx, d *series.Dataset) {
	t.Helper()
	within(t, ctx, 20*time.Second, "publishing", chromedp.Click(chromedp.CSS("#publish-button")),
		chromedp.WaitVisible(chromedp.CSS("#publish-marking")))
	if got := text(t, ctx, "#publish-marking"); !strings.Contains(got, "Published with differential privacy: ε = 0.9") {
		t.Errorf("marking on the page: %q", got)
	}
	if got := text(t, ctx, "#publish-intro"); !strings.Contains(got, "one reported case") || !strings.Contains(got, "counts as two changes") ||
		!strings.Contains(got, `public "no change" model`) {
		t.Errorf("what the guarantee covers, in words: %q", got)
	}
	if got := text(t, ctx, "#publish-figure"); !strings.Contains(got, "of your yearly limit 1") || !strings.Contains(got, "person's total") {
		t.Errorf("figure against the limit: %q", got)
	}
	name := func(sel string) string {
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(sel), "download"))
		if err != nil {
			t.Fatal(err)
		}
		return v.Value
	}
	csvName, markName := name("#publish-download"), name("#publish-marking-download")
	if !strings.HasPrefix(csvName, "fedcast-forecast-20") || !strings.HasSuffix(csvName, "-published.csv") ||
		markName != strings.TrimSuffix(csvName, ".csv")+".dp.json" {
		t.Errorf("download names %q and %q: want the forecast's date and -published.csv, .dp.json beside it", csvName, markName)
	}
	body := string(download(t, ctx, "#publish-download", csvName))
	fs, err := forecast.ReadHub(strings.NewReader(body))
	if err != nil || len(fs) != len(d.Regions) {
		t.Fatalf("published hub file (%v), %d forecasts for %d areas:\n%s", err, len(fs), len(d.Regions), body)
	}
	var mark publish.Marking
	raw := download(t, ctx, "#publish-marking-download", markName)
	if err := json.Unmarshal(raw, &mark); err != nil || !mark.DP || !(mark.EpsilonPerPersonYear > 0.9 && mark.EpsilonPerPersonYear <= 1) {
		t.Errorf("marking file %s (%v)", raw, err)
	}
	within(t, ctx, 20*time.Second, "publishing again", chromedp.Click(chromedp.CSS("#publish-button")),
		poll(`document.querySelector(".published") && document.querySelector(".published").textContent.includes("published before")`))
	shotOf(t, ctx, "#publish", "5-publish")
}
