package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/ui"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func text(t *testing.T, ctx chromedpCtx, sel string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// One script finds the element and reads its text, so a re-render
	// cannot come between the two: the page re-renders while it polls
	// the coordinator, and vugu reuses DOM nodes, so a node found by one
	// call could hold another element's text (the download link's) when a
	// second call read it. As chromedp.Text does, it waits until the
	// element exists (retrying until the timeout) and gives its innerText,
	// or "" when it is not laid out.
	js := fmt.Sprintf(`(function(){const e = document.querySelector(%q); if (!e) return null;
		return (e.offsetWidth || e.offsetHeight || e.getClientRects().length) ? e.innerText : "";})()`, sel)
	for {
		s, err := chromedp.Run(tctx, chromedp.Evaluate[*string](js))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		if s != nil {
			return *s
		}
		if tctx.Err() != nil {
			t.Fatalf("reading %s: no such element within 10 s", sel)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLHAJourney is the LHA page from the join link to the forecast, in
// Chromium, against a live coordinator with three simulated LHAs.
func TestLHAJourney(t *testing.T) {
	ctx := browser(t)
	// The coordinator's dashboard is watched from a second browser (a
	// background tab would get no frames to click or screenshot).
	admin := browser(t)
	// The study runs fedcast's default design (log-change features, a
	// small network), so the page trains and forecasts with it.
	design := model.Default
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "Browser test study", Epsilon: 3, Rounds: 4, ExpectedClients: 4,
		Hidden: design.Hidden, Features: string(design.Features), LearningRate: design.LearningRate, Damping: design.Damping,
		RoundLength: study.Duration(8 * time.Second)}}, 4)
	csv := fixture(t, "lha.csv")
	sec := secretsOf(t, csv)
	tr := capture(ctx)

	// 1. Open the join link: the study's settings and the trust model.
	start := time.Now()
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)))
	t.Logf("navigation to ready: %v (wasm %d bytes, gzip %d bytes)", time.Since(start), webApp(t).WasmSize, webApp(t).GzipSize)
	within(t, ctx, 10*time.Second, "study card", chromedp.WaitVisible(chromedp.CSS("#study")), chromedp.WaitVisible(chromedp.CSS("#trust")))
	studyText := text(t, ctx, "#study")
	for _, want := range []string{"Browser test study", "ε = 3", "δ = 1 in 100,000", "Up to 4 rounds", "bytes"} {
		if !strings.Contains(studyText, want) {
			t.Errorf("study card lacks %q:\n%s", want, studyText)
		}
	}
	// The page names the study by its hash, the coordinator's status too.
	if got, want := text(t, ctx, "#study-fingerprint code"), c.srv.PublicStatus().StudyID; strings.ReplaceAll(got, " ", "") != want || want == "" {
		t.Errorf("page shows study fingerprint %q, the coordinator's status %q", got, want)
	}
	// The hello has already left this computer: the log lists it at once.
	if got := text(t, ctx, "#sent-log"); !strings.Contains(got, "hello") {
		t.Errorf("before joining, the sent-messages log does not list the hello that was sent:\n%s", got)
	}
	shot(t, ctx, "1-joined")

	// 2. Choose the CSV: validated, summarised and plotted in the browser.
	within(t, ctx, 30*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{csv}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), chromedp.WaitVisible(chromedp.CSS("figure.chart svg path.bars")))
	if got := text(t, ctx, "#data-ok"); !strings.Contains(got, "2 areas") || !strings.Contains(got, "1 Oct 2020") {
		t.Errorf("data summary %q", got)
	}
	shot(t, ctx, "2-data")

	// 3. Join and train.
	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")),
		chromedp.WaitVisible(chromedp.CSS("#round")))
	within(t, ctx, 90*time.Second, "round 1 under way",
		poll(`/^Round [1-4] of 4/.test((document.getElementById("round")||{}).textContent||"")`))
	shot(t, ctx, "3-training")
	shotOf(t, ctx, "#train", "3-training-card")

	// Meanwhile, the dashboard.
	within(t, admin, 60*time.Second, "opening the dashboard", chromedp.Navigate(c.url+"/admin#"+c.secrets.Admin),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#overview")))
	shot(t, admin, "5-dashboard-running")

	within(t, ctx, 180*time.Second, "training to the end", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	shot(t, ctx, "4-forecast")
	c.waitFinished(t, 30*time.Second)

	// The budget shown equals the ledger's, and the browser's own
	// recomputation agrees.
	var led struct {
		EpsilonSpent float64               `json:"epsilon_spent"`
		Rounds       []struct{ Round int } `json:"rounds"`
	}
	c.adminGet(t, "/api/admin/ledger", &led)
	if want, got := "ε = "+ui.FormatEpsilon(led.EpsilonSpent), text(t, ctx, "#epsilon"); got != want {
		t.Errorf("budget shown %q, ledger says %q", got, want)
	}
	if cls, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#epsilon-check"), "class")); err != nil || !strings.Contains(cls.Value, "ok") {
		t.Errorf("ε recomputation check: class %q (%v): %s", cls.Value, err, text(t, ctx, "#epsilon-check"))
	}
	if got := text(t, ctx, "#round"); got != "Study ended: 4 of 4 rounds done" || len(led.Rounds) != 4 {
		t.Errorf("round shown %q, ledger has %d rounds", got, len(led.Rounds))
	}

	// The forecast names the day it is for (spec §3: centred average, the
	// last input day is 3 days before the last reported day, target P = 7
	// days later).
	d, err := series.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	_, _, target, err := series.LatestInput(d.Regions[0], series.WindowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := text(t, ctx, "#forecast .forecast-value .target"), target.Format("Monday 2 January 2006"); got != want {
		t.Errorf("forecast date %q, want %q", got, want)
	}
	if got := text(t, ctx, "#metrics"); !strings.Contains(got, "MAE") {
		t.Errorf("no local metrics: %q", got)
	}

	// The one verdict is the guard's: which method each headline uses
	// and why, from weekly origins training left out; the model's own
	// forecast beside the headline.
	areas, err := series.MakeWindows(d, series.WindowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, test := series.SplitAreas(areas, series.Temporal, c.file.TrainFraction, nil)
	tx, ty := series.Stack(test)
	persist := make([]float64, len(ty))
	model.Persistence(tx, persist)
	base := metrics.Compute(ty, persist)
	verdict := text(t, ctx, "#verdict")
	method := text(t, ctx, "#forecast .forecast-value .method")
	if !regexp.MustCompile(`^(Each forecast shown is the no-change forecast|Each forecast shown is the shared model's|The forecast shown is the shared model's for)`).MatchString(verdict) ||
		(method != "the no-change forecast" && method != "the shared model") || strings.Contains(verdict, "R²") {
		t.Errorf("verdict %q (method %q): want the guard's headline and reason", verdict, method)
	}
	if got := text(t, ctx, "#forecast .forecast-model"); !strings.HasPrefix(got, "The shared model's own forecast: ") {
		t.Errorf("model forecast beside the headline: %q", got)
	}
	t.Logf("verdict: %s", verdict)
	if got := text(t, ctx, "#baseline-mae"); got != ui.FormatCount(base.MAE) {
		t.Errorf("no-change MAE shown %q, want %q", got, ui.FormatCount(base.MAE))
	}
	// The range: two shaded bands on each area's chart, the range in
	// words, the LHA's own recent coverage, and the hub CSV download.
	checkForecastRange(t, ctx, d, target)

	// Timing of one local round in this browser.
	if m := regexp.MustCompile(`It took (\S+) in this browser`).FindStringSubmatch(text(t, ctx, "#train")); m != nil {
		t.Logf("one local round (%d Adam steps) in Chromium: %s", c.file.LocalEpochs, m[1])
	}

	// What left this computer: the page's log and the network agree, and
	// nothing carries a raw row, an area name or the row count.
	// The join token leaves in the websocket handshake (a subprotocol),
	// then ready (once, when Join is pressed) and one answer per round: an
	// update or a dummy, binary frames.
	frames, reqs := tr.snapshot()
	hs := tr.handshakesSeen()
	var hellos, readies, updates int
	for _, h := range hs {
		if strings.Contains(string(h.Body), "fedcast.auth.") {
			hellos++
		}
	}
	for _, f := range frames {
		switch {
		case f.Opcode == 1 && string(f.Payload) == `{"v":1,"type":"ready"}`:
			readies++ // carries nothing but its type
		case f.Opcode == 2:
			updates++
		}
	}
	if hellos != 1 || readies != 1 || updates != 4 || len(frames) != 5 {
		t.Errorf("sent %d frames (%d ready, %d binary) after %d handshakes with the token, want 1 handshake, 1 ready and 4 answers",
			len(frames), readies, updates, hellos)
	}
	logRows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sent-log tbody tr").length`))
	if err != nil || logRows != len(frames)+hellos {
		t.Errorf("the page lists %d sent messages (%v), the network saw %d frames and %d handshakes", logRows, err, len(frames), hellos)
	}
	if l := sec.leaks(frames, append(reqs, hs...)); len(l) > 0 {
		t.Errorf("private data left the browser:\n%s", strings.Join(l, "\n"))
	}
	t.Logf("checked %d websocket frames and %d HTTP requests against %d rows, %d area names and the row count %d",
		len(frames), len(reqs), len(sec.Rows), len(sec.Names), sec.RowCount)

	// Positive control: the page itself plants a raw row, the row count and
	// an area name in outgoing traffic; the same capture and check must
	// catch each.
	plant := `(() => {
		const ws = new WebSocket(location.origin.replace(/^http/, "ws") + "/api/ws");
		ws.onopen = () => { ws.send(JSON.stringify({v: 1, type: "hello", token: "x", rows: ` + itoa(sec.RowCount) + `})); ws.send(` + jsString(sec.Rows[0]) + `); };
		fetch("/api/status?n=` + itoa(sec.RowCount) + `&area=` + sec.Names[1] + `");
		return true;
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](plant)); err != nil {
		t.Fatal(err)
	}
	var planted []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		f2, r2 := tr.snapshot()
		planted = sec.leaks(f2[len(frames):], r2[len(reqs):])
		if len(planted) >= 4 {
			break
		}
	}
	if len(planted) < 4 {
		t.Errorf("positive control: the check caught %d of 4 planted leaks: %q", len(planted), planted)
	} else {
		t.Logf("positive control caught: %s", strings.Join(planted, "; "))
	}

	// The dashboard after the study: the ledger's figures and its export.
	within(t, admin, 30*time.Second, "dashboard after the study",
		poll(`(document.getElementById("admin-round")||{}).textContent === "4 of 4"`),
		chromedp.Click(chromedp.CSS("#ledger-button")), chromedp.WaitVisible(chromedp.CSS("#ledger-download")))
	if want, got := ui.FormatEpsilon(led.EpsilonSpent)+" of 3", text(t, admin, "#admin-epsilon"); got != want {
		t.Errorf("dashboard ε %q, want %q", got, want)
	}
	if n, err := chromedp.Run(admin, chromedp.Evaluate[int](`document.querySelectorAll("#admin-rounds tbody tr").length`)); err != nil || n != 4 {
		t.Errorf("dashboard lists %d rounds (%v), want 4", n, err)
	}
	href, err := chromedp.Run(admin, chromedp.AttributeValue(chromedp.CSS("#ledger-download"), "href"))
	if err != nil || !strings.HasPrefix(href.Value, "blob:") {
		t.Errorf("ledger download link %.60q (%v), want a blob: URL", href.Value, err)
	}
	if body := string(download(t, admin, "#ledger-download", "fedcast-ledger.json")); !strings.Contains(body, `"rounds"`) {
		t.Errorf("ledger download %.80q", body)
	}
	shot(t, admin, "6-dashboard-finished")

	// Without the admin token the dashboard shows nothing of the study.
	within(t, admin, 30*time.Second, "dashboard with a wrong token", chromedp.Navigate(c.url+"/admin#not-the-token"),
		chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#admin-problem")))
	body := text(t, admin, "main")
	for _, secret := range []string{"Browser test study", "Simulated LHA", "Northfield", "4 of 4"} {
		if strings.Contains(body, secret) {
			t.Errorf("dashboard without the token shows %q:\n%s", secret, body)
		}
	}
	shot(t, admin, "7-dashboard-refused")

	select {
	case err := <-c.simErrs:
		t.Errorf("simulated LHA: %v", err)
	default:
	}
}

// checkForecastRange checks the forecast's range on the LHA page and the
// downloaded hub file (the download link's data: URL, decoded and parsed).
func checkForecastRange(t *testing.T, ctx chromedpCtx, d *series.Dataset, target time.Time) {
	t.Helper()
	for _, class := range []string{"band95", "band50"} {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("#forecast .band.`+class+` path")).filter(p => (p.getAttribute("d")||"").endsWith("Z")).length`))
		if err != nil || n != len(d.Regions) {
			t.Errorf("%d %s shapes on the forecast charts (%v), want one per area (%d)", n, class, err, len(d.Regions))
		}
	}
	if got := text(t, ctx, "#forecast .forecast-range"); !strings.Contains(got, "Likely range: between") || !strings.Contains(got, "19 times out of 20") {
		t.Errorf("range in words: %q", got)
	}
	if got := text(t, ctx, "#recent-coverage"); !regexp.MustCompile(`\(\d+ past forecasts?, all areas together.*inside the 19-in-20 range \d+ times`).MatchString(got) {
		t.Errorf("recent coverage: %q", got)
	}
	link, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#hub-download"), "href"))
	if err != nil {
		t.Fatalf("download link: %v", err)
	}
	name, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#hub-download"), "download"))
	if err != nil || !strings.HasSuffix(name.Value, ".csv") {
		t.Errorf("download file name %q (%v)", name.Value, err)
	}
	// The link is a blob: URL made in the page (a data: URL of a large
	// forecast would overflow vugu's attribute buffer); click it and read
	// the file the browser saves, as a person would get it.
	if !strings.HasPrefix(link.Value, "blob:") {
		t.Fatalf("download link %.60q, want a blob: URL", link.Value)
	}
	body := string(download(t, ctx, "#hub-download", name.Value))
	fs, err := forecast.ReadHub(strings.NewReader(body))
	if err != nil {
		t.Fatalf("downloaded hub file: %v\n%s", err, body)
	}
	if len(fs) != len(d.Regions) || strings.Count(body, "\n") != 1+len(d.Regions)*forecast.NumLevels {
		t.Fatalf("hub file has %d forecasts, %d lines:\n%s", len(fs), strings.Count(body, "\n"), body)
	}
	for i, f := range fs {
		r := d.Regions[i]
		if f.Location != r.Name || !f.ReferenceDate.Equal(r.End()) || !f.TargetEndDate.Equal(target) {
			t.Errorf("hub forecast %d: %s %s → %s, want %s %s → %s", i, f.Location, f.ReferenceDate.Format(time.DateOnly),
				f.TargetEndDate.Format(time.DateOnly), r.Name, r.End().Format(time.DateOnly), target.Format(time.DateOnly))
		}
	}
	shotOf(t, ctx, "#forecast", "4-forecast-range")
	checkPagePublish(t, ctx, d)
}
