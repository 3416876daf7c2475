package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/ui"
)

// bigFile writes a ten-year, many-area CSV (date,region,cases) into dir
// and returns its path and each area's total. Counts are a deterministic
// weekly and yearly wave per area, so the totals are known exactly.
func bigFile(t *testing.T, dir string, days, areas int) (string, []float64) {
	t.Helper()
	p := filepath.Join(dir, "ten-years.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("date,region,cases\n")
	start := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	totals := make([]float64, areas)
	var line []byte
	for d := range days {
		date := start.AddDate(0, 0, d).Format(time.DateOnly)
		for a := range areas {
			v := (a%37+5)*(3+d%7) + int(40*(1+math.Sin(float64(d)/58+float64(a))))
			totals[a] += float64(v)
			line = append(line[:0], date...)
			line = append(line, ",Kreis "...)
			line = append(line, fmt.Sprintf("%04d", a)...)
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(v), 10)
			line = append(line, '\n')
			w.Write(line)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p, totals
}

// longTasks installs a Long Tasks API observer; maxLongTask reads the
// longest main-thread task seen since (0 when none over 50 ms).
const longTasks = `(() => { window.__longtasks = []; new PerformanceObserver(l => { for (const e of l.getEntries()) window.__longtasks.push([Math.round(e.startTime), Math.round(e.duration)]); }).observe({entryTypes: ["longtask"]}); return true; })()`
const maxLongTask = `Math.max(0, ...(window.__longtasks || []).map(e => e[1]))`

// mark records the page's clock at a stage of a test, to place long tasks.
func mark(t *testing.T, ctx chromedpCtx, stage string) {
	t.Helper()
	if now, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.now()`)); err == nil {
		t.Logf("page clock %.0f ms: %s", now, stage)
	}
}

// logLongTasks logs every long task seen as [start ms, duration ms].
func logLongTasks(t *testing.T, ctx chromedpCtx) {
	t.Helper()
	if s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.__longtasks || [])`)); err == nil {
		t.Logf("long tasks [start, duration] ms: %s", s)
	}
}

// rendererPeakRSS is the largest peak resident memory (VmHWM) of the
// browser's renderer processes, in bytes (0 when /proc cannot tell).
func rendererPeakRSS(ctx chromedpCtx) int64 {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil || c.Browser.Process() == nil {
		return 0
	}
	root := c.Browser.Process().Pid
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 2 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
	}
	var peak int64
	for pid := range parent {
		anc := pid
		for range 10 {
			if anc == root || anc <= 1 {
				break
			}
			anc = parent[anc]
		}
		if anc != root {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if !bytes.Contains(cmd, []byte("--type=renderer")) {
			continue
		}
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				peak = max(peak, kb<<10)
			}
		}
	}
	return peak
}

// TestLargeFile loads ten years of 500 areas (3,650 × 500 rows, about
// 50 MB; generated here) into the page, checks the totals shown, the
// paging, and that no main-thread task took over 200 ms while the file was
// read, checked, trained on for two rounds and forecast from; it logs the
// renderer's peak memory.
func TestLargeFile(t *testing.T) {
	const days, areas = 3650, 500
	ctx := browser(t)
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "Ten-year study", Epsilon: 3, Rounds: 2, ExpectedClients: 2,
		From: "2020-11-01", To: "2020-12-01", LocalEpochs: 10,
		RoundLength: study.Duration(12 * time.Second)}}, 2)
	csv, totals := bigFile(t, t.TempDir(), days, areas)
	fi, _ := os.Stat(csv)
	t.Logf("generated %s: %d bytes", csv, fi.Size())

	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), void(chromedp.Evaluate[bool](longTasks)))
	base := rendererPeakRSS(ctx)
	t.Logf("renderer peak RSS (VmHWM) with the page open, before the file: %.0f MB", float64(base)/(1<<20))
	start := time.Now()
	mark(t, ctx, "choosing the file")
	within(t, ctx, 180*time.Second, "loading the ten-year file", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{csv}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), chromedp.WaitVisible(chromedp.CSS("#round-estimate")))
	t.Logf("file read, checked and timed in %v", time.Since(start))
	mark(t, ctx, "file shown and checked")
	t.Logf("renderer peak RSS (VmHWM) once the file is read and checked: %.0f MB", float64(rendererPeakRSS(ctx))/(1<<20))
	grand := 0.0
	for _, v := range totals {
		grand += v
	}
	ok := text(t, ctx, "#data-ok")
	for _, want := range []string{"500 areas", "1 Jan 2015", "28 Dec 2024", ui.FormatCount(grand) + " cases in total"} {
		if !strings.Contains(ok, want) {
			t.Errorf("data summary %q lacks %q", ok, want)
		}
	}
	// The areas table shows 20 rows a page, with each area's total.
	checkRows := func(page int) {
		t.Helper()
		tbl := text(t, ctx, "#areas tbody")
		for a := page * ui.AreasPerPage; a < (page+1)*ui.AreasPerPage; a++ {
			row := fmt.Sprintf("Kreis %04d\t2015-01-01\t2024-12-28\t3,650\t%s", a, ui.FormatCount(totals[a]))
			if !strings.Contains(tbl, row) {
				t.Errorf("page %d lacks the row %q:\n%s", page, row, tbl)
				return
			}
		}
		if n := strings.Count(tbl, "Kreis "); n != ui.AreasPerPage {
			t.Errorf("page %d shows %d areas", page, n)
		}
	}
	checkRows(0)
	if got := text(t, ctx, "#areas-pager"); !strings.Contains(got, "Areas 1–20 of 500") {
		t.Errorf("pager %q", got)
	}
	within(t, ctx, 10*time.Second, "next areas", chromedp.Click(chromedp.CSS("#areas-next")),
		poll(`document.getElementById("areas-pager").textContent.includes("Areas 21–40 of 500")`))
	checkRows(1)
	within(t, ctx, 10*time.Second, "showing another area", chromedp.Click(chromedp.CSS(`button.show-area[data-area="Kreis 0025"]`)),
		poll(`document.querySelector("#data figcaption").textContent === "Reported cases in Kreis 0025"`))
	if n := strings.Count(text(t, ctx, "#preview tbody"), "\n") + 1; n != ui.PreviewPerPage {
		t.Errorf("the preview shows %d days", n)
	}
	est := text(t, ctx, "#round-estimate")
	t.Logf("estimate shown: %s", est)
	if !strings.Contains(est, "1,000 of your 6,000 training examples") {
		t.Errorf("estimate %q: want the capped count of the study's windows (500 areas × 12)", est)
	}
	shot(t, ctx, "1-loaded")

	mark(t, ctx, "joining")
	within(t, ctx, 10*time.Second, "watching the forecast's progress", void(chromedp.Evaluate[bool](watchForecastProgress)))
	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	within(t, ctx, 240*time.Second, "training", poll(`!!document.querySelector("#forecast-progress, #forecast .forecast-value")`))
	if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById("forecast-progress")`)); ok {
		// A picture half way, when the forecast is slow enough to catch.
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		chromedp.Do(tctx, poll(`/^Step [3-9]/.test(document.getElementById("forecast-progress")?.textContent ?? "")`))
		cancel()
		shotOf(t, ctx, "#forecast", "2-forecasting")
	}
	within(t, ctx, 240*time.Second, "forecast", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	mark(t, ctx, "forecast shown")
	logLongTasks(t, ctx)
	checkForecastProgress(t, ctx, areas)
	if got := text(t, ctx, "#forecast-pager"); !strings.Contains(got, "Areas 1–10 of 500") {
		t.Errorf("forecast pager %q", got)
	}
	if got := text(t, ctx, "#sent-log"); strings.Count(got, "counted") < 2 || strings.Contains(got, "not counted") {
		t.Errorf("both updates should show as counted:\n%s", got)
	}
	shot(t, ctx, "2-forecast")
	shotOf(t, ctx, "#train", "2-train-card")
	shotOf(t, ctx, "#sent-log", "2-sent-log")
	longest, err := chromedp.Run(ctx, chromedp.Evaluate[float64](maxLongTask))
	if err != nil {
		t.Fatal(err)
	}
	peak := rendererPeakRSS(ctx)
	t.Logf("longest main-thread task: %.0f ms; renderer peak RSS (VmHWM): %.0f MB", longest, float64(peak)/(1<<20))
	// The target is 200 ms on a machine running at normal speed. This
	// machine may be loaded (tests of several packages, other users), which
	// stretches every task alike; the page's own round estimate measures
	// how much slower than the quiet reference (35 µs per training example
	// and step in Chromium, docs/browser.md) the browser runs right now, and
	// the limit is scaled by that factor (never below 200 ms).
	slow := 1.0
	if m := regexp.MustCompile(`about ([0-9.]+) (second|seconds|minutes) on this computer`).FindStringSubmatch(est); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "minutes" {
			v *= 60
		}
		// The page's estimate adds a fifth for renders during training
		// and two renders of the page (ui.estimateRound); the reference
		// counts the fifth, so only the two renders loosen the limit.
		slow = max(1, v/(35e-6*1000*float64(c.file.LocalEpochs)*5/4))
	}
	limit := 200 * slow
	t.Logf("load factor %.2f: long-task limit %.0f ms", slow, limit)
	if longest > limit {
		t.Errorf("a main-thread task took %.0f ms (limit %.0f ms = 200 ms × load factor %.2f)", longest, limit, slow)
	}
	if peak > 500<<20 {
		t.Errorf("renderer peak memory %d MB (limit 500 MB)", peak>>20)
	}
}

// watchForecastProgress records, every 10 ms the page lets a timer run,
// the forecast's progress line and bar whenever they change, and when
// "Working out the forecast" appeared and went.
const watchForecastProgress = `(() => {
	window.__progress = []; window.__forecasting = [];
	let last = "";
	setInterval(() => {
		const on = !!document.getElementById("forecasting"), f = window.__forecasting;
		if (on !== (f.length % 2 === 1)) f.push(Math.round(performance.now()));
		const el = document.getElementById("forecast-progress"), bar = document.getElementById("forecast-progress-bar");
		if (!el) return;
		const width = bar ? parseFloat(bar.style.width) : -1;
		if (el.textContent + width === last) return;
		last = el.textContent + width;
		window.__progress.push({t: Math.round(performance.now()), text: el.textContent, width: width});
	}, 10);
	return true;
})()`

// checkForecastProgress checks what watchForecastProgress saw: the line
// "Step s of S: i of N areas done." with its bar, for the file's N areas,
// only ever growing, and both gone once the forecast is shown. The
// forecast of hundreds of areas takes seconds, so at least one state is
// seen.
func checkForecastProgress(t *testing.T, ctx chromedpCtx, areas int) {
	t.Helper()
	type sample struct {
		T     float64 `json:"t"`
		Text  string  `json:"text"`
		Width float64 `json:"width"`
	}
	var seen []sample
	var span []float64
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify([window.__progress, window.__forecasting])`))
	if err == nil {
		var both [2]json.RawMessage
		if err = json.Unmarshal([]byte(got), &both); err == nil {
			err = errors.Join(json.Unmarshal(both[0], &seen), json.Unmarshal(both[1], &span))
		}
	}
	if err != nil {
		t.Fatalf("reading the forecast's progress: %v", err)
	}
	if len(span) == 2 {
		t.Logf("working out the forecast took %.1f s; %d states of its progress seen", (span[1]-span[0])/1000, len(seen))
	}
	if len(span) != 2 || len(seen) == 0 {
		t.Fatalf("the forecast's progress: shown from/to %v, %d states seen", span, len(seen))
	}
	re := regexp.MustCompile(`^Step (\d+) of (\d+): ([0-9,]+) of ([0-9,]+) areas done\.$`)
	var step, steps, done int
	width := -1.0
	for _, s := range seen {
		m := re.FindStringSubmatch(s.Text)
		if m == nil || m[4] != ui.FormatCount(float64(areas)) || s.Width < 0 {
			t.Fatalf("progress %q (bar %v %%): want \"Step s of S: i of %d areas done.\" with its bar", s.Text, s.Width, areas)
		}
		st, _ := strconv.Atoi(m[1])
		sts, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(strings.ReplaceAll(m[3], ",", ""))
		if steps != 0 && sts != steps || st < step || st == step && d < done || s.Width < width || st > sts || d > areas {
			t.Fatalf("progress %q (bar %v %%) after step %d of %d, %d done (bar %v %%)", s.Text, s.Width, step, steps, done, width)
		}
		step, steps, done, width = st, sts, d, s.Width
	}
	t.Logf("first state %q at %d ms, last %q at %d ms", seen[0].Text, int(seen[0].T), seen[len(seen)-1].Text, int(seen[len(seen)-1].T))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#forecasting, #forecast-progress, #forecast-progress-bar").length`)); err != nil || n != 0 {
		t.Errorf("%d progress elements left once the forecast is shown (%v)", n, err)
	}
}

// TestOverrunSendsDummyOnTime: the page warns before joining that a
// browser training longer than the round lasts would be too late; once
// joined, a picked round whose training overruns the answer moment
// (protocol.AnswerAfter) is answered on time with a dummy of an update's
// size, never with a late update (issue 22), so no answer is refused.
func TestOverrunSendsDummyOnTime(t *testing.T) {
	ctx := browser(t)
	// Rounds of 500 ms (answers at 360 ms) against 150 training steps
	// (0.7 s in a quiet Chromium), q = 1: picked every round, never
	// trained in time.
	c := startCoordinator(t, study.File{Settings: protocol.Settings{Name: "Too-slow study", Epsilon: 3, Rounds: 8, ExpectedClients: 2, LocalEpochs: 150,
		RoundLength: study.Duration(500 * time.Millisecond)}}, 2)
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)))
	within(t, ctx, 60*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "lha.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#round-estimate")))
	if est := text(t, ctx, "#round-estimate"); !strings.Contains(est, "too late") {
		t.Errorf("no warning before joining: %q", est)
	}
	shot(t, ctx, "1-estimate")
	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	c.waitFinished(t, 180*time.Second)
	within(t, ctx, 60*time.Second, "the end", chromedp.WaitVisible(chromedp.CSS("#forecast")))
	log := text(t, ctx, "#sent-log")
	if n := strings.Count(log, "a stand-in of the same size"); n < 2 || strings.Contains(log, "the model changes computed here") ||
		strings.Contains(log, "not counted") {
		t.Errorf("want a dummy on time for every overrun round, no late update and nothing refused (%d dummies):\n%s", n, log)
	}
	// The page says why: the training was late, not "not picked" (q = 1).
	if n := strings.Count(log, "had not finished"); n < 2 || strings.Contains(log, "not picked") {
		t.Errorf("want every overrun stand-in to say the training had not finished (%d do):\n%s", n, log)
	}
	if got := text(t, ctx, "#train"); !strings.Contains(got, "not finished in time") {
		t.Errorf("the training line does not say the last round's training was late:\n%s", got)
	}
	shot(t, ctx, "2-dummies")
	shotOf(t, ctx, "#sent-log", "2-sent-log")
}

// TestInsecureSeedAndLimit: a research-mode study is announced on the page
// and joining needs a confirmation; an LHA limit between ε after one round
// and after two lets the page send round 1 and refuse round 2, saying so.
func TestInsecureSeedAndLimit(t *testing.T) {
	ctx := browser(t)
	seed := uint64(7)
	tmpl := study.File{Settings: protocol.Settings{Name: "Research-mode study", Epsilon: 10, Rounds: 3, ExpectedClients: 2,
		RoundLength: study.Duration(4 * time.Second)}}
	c := startCoordinatorWith(t, tmpl, 2, &study.Options{InsecureSeed: &seed})
	st := c.file
	acc := privacy.NewRDP(nil)
	q := float64(st.ExpectedClients) / float64(len(c.secrets.LHAs))
	acc.Compose(q, c.srv.PublicStatus().NoiseMultiplier, 1)
	eps1, _ := acc.Epsilon(st.Delta)
	acc.Compose(q, c.srv.PublicStatus().NoiseMultiplier, 1)
	eps2, _ := acc.Epsilon(st.Delta)
	limit := (eps1 + eps2) / 2
	t.Logf("ε after 1 round %.4f, after 2 %.4f; limit %.4f", eps1, eps2, limit)

	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#insecure-warning")))
	if w := text(t, ctx, "#insecure-warning"); !strings.Contains(w, "no privacy protection") || !strings.Contains(w, "does not hold") {
		t.Errorf("warning %q", w)
	}
	within(t, ctx, 60*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "lha.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#round-estimate")))
	if dis, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#join-button"), "disabled")); err != nil || !dis.Exists {
		t.Errorf("the join button is active before the research mode was confirmed (%v)", err)
	}
	setLimit := fmt.Sprintf(`(() => { const e = document.getElementById("max-epsilon"); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`,
		strconv.FormatFloat(limit, 'f', 6, 64))
	within(t, ctx, 10*time.Second, "setting the limit and confirming", void(chromedp.Evaluate[bool](setLimit)),
		chromedp.Click(chromedp.CSS("#insecure-ack")),
		poll(`!document.getElementById("join-button").disabled`))
	shot(t, ctx, "1-warning")
	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	within(t, ctx, 120*time.Second, "the limit stops sending", chromedp.WaitVisible(chromedp.CSS("#skips")))
	skips := text(t, ctx, "#skips")
	if !strings.Contains(skips, "Round 2: you were picked, but nothing was sent") || !strings.Contains(skips, "ε = "+ui.FormatEpsilon(limit)) {
		t.Errorf("skips %q", skips)
	}
	c.waitFinished(t, 120*time.Second)
	within(t, ctx, 60*time.Second, "the end", chromedp.WaitVisible(chromedp.CSS("#forecast")))
	log := text(t, ctx, "#sent-log")
	if n := strings.Count(log, "round 1: the model changes"); n != 1 {
		t.Errorf("round 1's update listed %d times:\n%s", n, log)
	}
	for _, r := range []string{"round 2: the model changes", "round 3: the model changes"} {
		if strings.Contains(log, r) {
			t.Errorf("an update was sent past the limit (%s):\n%s", r, log)
		}
	}
	shot(t, ctx, "2-limit")
	shotOf(t, ctx, "#train", "2-train-card")
}
