package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
)

// readyStudy is a small study of fedcast's default design.
func readyStudy(name string, rounds int, length time.Duration, quorum int) study.File {
	d := model.Default
	return study.File{StartQuorum: quorum,
		Settings: protocol.Settings{Name: name, Epsilon: 3, Rounds: rounds, ExpectedClients: 2,
			Hidden: d.Hidden, Features: string(d.Features), LearningRate: d.LearningRate, Damping: d.Damping,
			RoundLength: study.Duration(length)}}
}

// openJoinLink opens the browser seat's join link and waits for the study
// card.
func openJoinLink(t *testing.T, ctx chromedpCtx, c *coordinator) {
	t.Helper()
	within(t, ctx, 60*time.Second, "opening the join link", chromedp.Navigate(c.joinURL()),
		chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)), chromedp.WaitVisible(chromedp.CSS("#study")))
}

// adminCounts reads the dashboard's online and ready counts.
func adminCounts(t *testing.T, c *coordinator) (online, ready int, st protocol.AdminStatus) {
	t.Helper()
	c.adminGet(t, "/api/admin/status", &st)
	return st.Online, st.Ready, st
}

// TestRoundOneWaitsForTheBrowser is issue 23's first finding: in a 2-LHA
// study the browser user chooses the file 20 s after opening the link.
// The open page alone is online but not ready: round 1 does not start
// (the quorum counts ready LHAs; there is no ready timeout), the dashboard
// shows 2 online and 1 ready, and once the user presses Join round 1
// starts with both and the browser's update is counted in it.
func TestRoundOneWaitsForTheBrowser(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Ready test study", 2, 6*time.Second, 0), 2)
	csv := fixture(t, "lha.csv")
	openJoinLink(t, ctx, c)
	opened := time.Now()
	if got := text(t, ctx, "#study"); !strings.Contains(got, "round 1 begins when enough authorities have chosen their file and pressed Join") {
		t.Errorf("study card before the start: %q", got)
	}
	shot(t, ctx, "1-opened")
	shotOf(t, ctx, "#train", "1-opened-card")

	// The user reads the page for 20 s before choosing the file;
	// meanwhile the coordinator opens the dashboard.
	admin := browser(t)
	within(t, admin, 60*time.Second, "opening the dashboard", chromedp.Navigate(c.url+"/admin#"+c.secrets.Admin),
		chromedp.WaitVisible(chromedp.CSS(`#admin-lhas`)))
	time.Sleep(time.Until(opened.Add(20 * time.Second)))
	if st := c.srv.PublicStatus(); st.State != protocol.StateWaiting || st.Round != 0 {
		t.Fatalf("20 s after the page opened, before any file was chosen: state %q, round %d; want waiting", st.State, st.Round)
	}
	if online, ready, _ := adminCounts(t, c); online != 2 || ready != 1 {
		t.Errorf("dashboard counts before the file: %d online, %d ready; want 2 and 1", online, ready)
	}
	if got := text(t, admin, "#admin-lhas"); got != "1 ready · 2 online" {
		t.Errorf("dashboard tile %q, want 1 ready · 2 online", got)
	}
	shotOf(t, admin, "#overview", "1-dashboard-waiting")

	within(t, ctx, 30*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{csv}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), poll(`!document.getElementById("join-button").disabled`))
	if st := c.srv.PublicStatus(); st.State != protocol.StateWaiting {
		t.Fatalf("a chosen file without Join started the study: state %q", st.State)
	}
	shot(t, ctx, "2-file-chosen")

	within(t, ctx, 10*time.Second, "joining", chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#round")))
	shot(t, ctx, "3-joined")
	shotOf(t, ctx, "#train", "3-joined-card")
	within(t, ctx, 60*time.Second, "round 1 released", poll(`/^Round [12] of 2/.test(document.getElementById("round").textContent)`))
	shot(t, ctx, "4-round-1")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#missed").length`)); err != nil || n != 0 {
		t.Errorf("the page speaks of missed rounds (%d, %v): %s", n, err, text(t, ctx, "#train"))
	}

	within(t, ctx, 90*time.Second, "the forecast", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	shot(t, ctx, "5-finished")
	shotOf(t, ctx, "#train", "5-finished-card")
	shotOf(t, ctx, "#forecast", "5-finished-forecast")
	c.waitFinished(t, 30*time.Second)
	_, _, st := adminCounts(t, c)
	if len(st.Participation) == 0 || st.Participation[0].Round != 1 || st.Participation[0].Received != 2 {
		t.Errorf("round 1's participation %+v: want both LHAs' updates counted", st.Participation)
	}
	if got := text(t, ctx, "#round"); got != "Study ended: 2 of 2 rounds done" {
		t.Errorf("round line at the end: %q", got)
	}
}

// TestLateJoinerIsToldWhatItMissed: with a quorum of 1 the study starts
// without the browser; it joins after two rounds have run, and its page
// says, in plain words, which rounds ran before it joined and why that is
// fine.
func TestLateJoinerIsToldWhatItMissed(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Late join study", 5, 4*time.Second, 1), 2)
	csv := fixture(t, "lha.csv")
	openJoinLink(t, ctx, c)
	for deadline := time.Now().Add(30 * time.Second); c.srv.PublicStatus().Round < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("two rounds did not run without the browser: %+v", c.srv.PublicStatus())
		}
	}
	within(t, ctx, 30*time.Second, "choosing the CSV and joining", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{csv}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), poll(`!document.getElementById("join-button").disabled`),
		chromedp.Click(chromedp.CSS("#join-button")), chromedp.WaitVisible(chromedp.CSS("#missed")))
	got := text(t, ctx, "#missed")
	if !strings.Contains(got, "ran before you joined") || !strings.Contains(got, "cost you no privacy") || !regexp.MustCompile(`Rounds? 1 (ran|and 2|to \d+)`).MatchString(got) {
		t.Errorf("missed rounds in words: %q", got)
	}
	t.Logf("missed: %s", got)
	shot(t, ctx, "1-joined-late")
	shotOf(t, ctx, "#train", "1-joined-late-card")
}

// TestOpenedAfterTheEnd: a join link opened once every round is released
// says the study has ended, not that it is running, and its button gets
// the final model's forecast.
func TestOpenedAfterTheEnd(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Ended study", 2, 2*time.Second, 1), 2)
	c.waitFinished(t, 60*time.Second)
	openJoinLink(t, ctx, c)
	if got := text(t, ctx, "#study"); !strings.Contains(got, "The study has ended: all 2 rounds are done.") || strings.Contains(got, "running") {
		t.Errorf("study card after the end:\n%s", got)
	}
	within(t, ctx, 30*time.Second, "choosing the CSV", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "lha.csv")}),
		chromedp.WaitVisible(chromedp.CSS("#data-ok")), poll(`!document.getElementById("join-button").disabled`))
	if got := text(t, ctx, "#join-button"); got != "Get the forecast" {
		t.Errorf("button %q", got)
	}
	if got := text(t, ctx, "#ready-words"); strings.Contains(got, "until the study ends") {
		t.Errorf("before the button: %q", got)
	}
	shot(t, ctx, "1-opened-after-the-end")
	within(t, ctx, 60*time.Second, "the forecast", chromedp.Click(chromedp.CSS("#join-button")),
		chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	if got := text(t, ctx, "#round"); got != "Study ended: 2 of 2 rounds done" {
		t.Errorf("round line: %q", got)
	}
	shot(t, ctx, "2-forecast")
}

// TestPageNamesFileProblems: on the page, a PNG and an ELF program named
// .csv are "not a text (CSV) file" with what they look like, and a file
// that ends on the study's last day names the days the study needs, the
// last usable end, and what to do, in the same words as the client.
func TestPageNamesFileProblems(t *testing.T) {
	ctx := browser(t)
	f := readyStudy("Window study", 2, 30*time.Second, 0)
	f.From, f.To = "2020-11-01", "2020-12-31" // lha.csv ends on 2020-12-31
	c := startCoordinator(t, f, 2)
	openJoinLink(t, ctx, c)
	root := testkit.RepoRoot()
	for i, tc := range []struct{ file, kind string }{{"png-image.csv", "a PNG image"}, {"elf-program.csv", "a program (ELF executable)"}} {
		within(t, ctx, 30*time.Second, "choosing "+tc.file,
			chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{filepath.Join(root, "shared/series/testdata/bad", tc.file)}),
			poll(`(document.getElementById("data-problem")||{textContent:""}).textContent.includes(`+jsString(tc.kind)+`)`))
		got := text(t, ctx, "#data-problem")
		if !strings.Contains(got, "This is not a text (CSV) file") || !strings.Contains(got, "It looks like "+tc.kind) || strings.Contains(got, "series:") {
			t.Errorf("%s: %q", tc.file, got)
		}
		shotOf(t, ctx, "#data", fmt.Sprintf("%d-not-text-card", i+1))
	}
	// The file is read: the study cannot use it, but the LHA can join,
	// present only (issue 23: ready never depends on the file's content).
	within(t, ctx, 30*time.Second, "choosing a file that ends on the study's last day",
		chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{fixture(t, "lha.csv")}),
		poll(`(document.getElementById("data-unusable")||{textContent:""}).textContent.includes("2021-01-03")`),
		poll(`!document.getElementById("join-button").disabled`))
	if got := text(t, ctx, "#join-button"); got != "Join as present only" {
		t.Errorf("join button %q", got)
	}
	got := text(t, ctx, "#data-unusable")
	for _, want := range []string{"does not cover the days this study needs", "2020-10-29 to 2021-01-03", "tell your coordinator",
		"can end on 2020-12-28 at the latest", "2021-01-01 … 2021-01-03"} {
		if !strings.Contains(got, want) {
			t.Errorf("coverage problem lacks %q:\n%s", want, got)
		}
	}
	shotOf(t, ctx, "#data", "3-coverage-card")
}

// TestShortFileJoinsPresentOnly is issue 23's "Ready depends only on a
// file having been chosen and parsed, never on what is in it": in a
// 2-LHA study whose round 1 waits for both, the browser chooses a file
// of 5 days, far too short for the study. The page says why and what to
// do, lets it join present only, and it counts towards the quorum: round
// 1 starts. The page answers every round with a stand-in, never an
// update, and says in plain words that it takes part present only.
func TestShortFileJoinsPresentOnly(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Present-only study", 2, 6*time.Second, 0), 2)
	short := shortFile(t)
	openJoinLink(t, ctx, c)
	within(t, ctx, 30*time.Second, "choosing the short file", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{short}),
		chromedp.WaitVisible(chromedp.CSS("#data-unusable")), chromedp.WaitVisible(chromedp.CSS("#present-only-note")),
		poll(`!document.getElementById("join-button").disabled`))
	before := text(t, ctx, "#data-unusable") + " " + text(t, ctx, "#present-only-note")
	for _, want := range []string{"Your file is too short for this study", "Area Northfield has 5 days", "Export more days", "tell your coordinator",
		"only be counted as present", "your data are not used", "Nothing about your file is sent"} {
		if !strings.Contains(before, want) {
			t.Errorf("before joining, the page lacks %q:\n%s", want, before)
		}
	}
	if got := text(t, ctx, "#join-button"); got != "Join as present only" {
		t.Errorf("join button %q", got)
	}
	if st := c.srv.PublicStatus(); st.State != protocol.StateWaiting {
		t.Fatalf("the study started before the page joined: %q", st.State)
	}
	shot(t, ctx, "1-short-file")
	shotOf(t, ctx, "#data", "1-short-file-data-card")
	shotOf(t, ctx, "#train", "1-short-file-train-card")

	within(t, ctx, 10*time.Second, "joining present only", chromedp.Click(chromedp.CSS("#join-button")),
		chromedp.WaitVisible(chromedp.CSS("#present-only")))
	within(t, ctx, 60*time.Second, "round 1 starts and is released", poll(`/^Round [12] of 2/.test(document.getElementById("round").textContent)`))
	if online, ready, _ := adminCounts(t, c); online != 2 || ready != 2 {
		t.Errorf("dashboard counts after joining: %d online, %d ready; want 2 and 2", online, ready)
	}
	after := text(t, ctx, "#train")
	for _, want := range []string{"You take part as present only", "Export more days", "tell your coordinator", "trains nothing",
		"Local training: none"} {
		if !strings.Contains(after, want) {
			t.Errorf("after joining, the page lacks %q:\n%s", want, after)
		}
	}
	if strings.Contains(after+before, "series:") || strings.Contains(after+before, "session:") {
		t.Errorf("a Go package prefix on the page:\n%s\n%s", before, after)
	}
	shot(t, ctx, "2-present-only")
	shotOf(t, ctx, "#train", "2-present-only-train-card")

	c.waitFinished(t, 60*time.Second)
	within(t, ctx, 30*time.Second, "the end", poll(`document.getElementById("round").textContent.startsWith("Study ended")`))
	n, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.querySelectorAll('#sent-log tr[data-type="dummy"]').length,
		document.querySelectorAll('#sent-log tr[data-type="update"]').length]`))
	if err != nil || len(n) != 2 || n[0] != 2 || n[1] != 0 {
		t.Errorf("sent log: %v dummies and updates (%v), want 2 and 0:\n%s", n, err, text(t, ctx, "#sent-log"))
	}
	if log := text(t, ctx, "#sent-log"); !strings.Contains(log, "the study cannot use your file") {
		t.Errorf("the stand-ins are not explained:\n%s", log)
	}
	// The page works out the forecast at the end ("Step 1 of 5 …") before
	// it can say there is none.
	within(t, ctx, 30*time.Second, "the forecast card's answer",
		poll(`/No forecast: your file has too few days/.test(document.getElementById("forecast").textContent)`))
	if got := text(t, ctx, "#forecast"); !strings.Contains(got, "No forecast: your file has too few days") {
		t.Errorf("the forecast card at the end: %q", got)
	}
	_, _, st := adminCounts(t, c)
	if len(st.Participation) == 0 || st.Participation[0].Round != 1 {
		t.Errorf("participation %+v: want round 1 run", st.Participation)
	}
	shot(t, ctx, "3-finished")
	shotOf(t, ctx, "#sent-log", "3-finished-sent-log")
}

// TestSentLogShowsTheLatest: a page that joined a 14-round study present
// only (cheap: it trains nothing) has sent 16 messages. "What left this
// computer" lists the latest 12, sums up the 4 before them in one row,
// and lists all 16 on request; its total counts all of them.
func TestSentLogShowsTheLatest(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Long study", 14, 2*time.Second, 0), 2)
	short := shortFile(t)
	openJoinLink(t, ctx, c)
	within(t, ctx, 30*time.Second, "choosing the short file", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{short}),
		poll(`!document.getElementById("join-button").disabled`))
	within(t, ctx, 10*time.Second, "joining present only", chromedp.Click(chromedp.CSS("#join-button")),
		chromedp.WaitVisible(chromedp.CSS("#present-only")))
	c.waitFinished(t, 120*time.Second)
	within(t, ctx, 30*time.Second, "the end", poll(`document.getElementById("round").textContent.startsWith("Study ended")`))
	rows := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sent-log tbody tr[data-type]").length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(); n != 12 {
		t.Errorf("%d messages listed, want the latest 12", n)
	}
	if got := strings.TrimSpace(text(t, ctx, "#sent-earlier")); !strings.HasPrefix(got, "4 earlier messages, ") || !strings.Contains(got, "Show all") {
		t.Errorf("summary row %q", got)
	}
	if got := text(t, ctx, "#sent-log tfoot"); !strings.Contains(got, "16 messages") {
		t.Errorf("total %q", got)
	}
	shotOf(t, ctx, "#sent-log", "1-latest")
	within(t, ctx, 10*time.Second, "showing all", chromedp.Click(chromedp.CSS("#sent-all")), chromedp.WaitVisible(chromedp.CSS("#sent-latest")))
	if n := rows(); n != 16 {
		t.Errorf("%d messages listed after Show all, want 16", n)
	}
	shotOf(t, ctx, "#sent-log", "2-all")
}

// TestSentLogSurvivesReload: "What left this computer" is kept in the
// browser's localStorage. A page reloaded mid-study lists what left before
// the reload, then its new hello; a record damaged in localStorage is
// dropped, and the list says once that earlier messages are missing.
func TestSentLogSurvivesReload(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, readyStudy("Reload study", 30, 2*time.Second, 0), 2)
	openJoinLink(t, ctx, c)
	within(t, ctx, 30*time.Second, "choosing the short file", chromedp.SetUploadFiles(chromedp.CSS("#csv-file"), []string{shortFile(t)}),
		poll(`!document.getElementById("join-button").disabled`))
	within(t, ctx, 10*time.Second, "joining present only", chromedp.Click(chromedp.CSS("#join-button")),
		chromedp.WaitVisible(chromedp.CSS("#present-only")))
	within(t, ctx, 60*time.Second, "two rounds answered", poll(`document.querySelectorAll('#sent-log tr[data-type="dummy"]').length >= 2`))
	listed := func() []string {
		t.Helper()
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("#sent-log tbody tr[data-type]")].map(r => r.dataset.type + " " + r.dataset.round)`))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	reload := func(what string) {
		t.Helper()
		within(t, ctx, 60*time.Second, what, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#app[data-ready="1"]`)),
			chromedp.WaitVisible(chromedp.CSS("#sent-log tbody tr[data-type]")))
	}
	before := listed()
	reload("reloading mid-study")
	after := listed()
	// A round may end between the reading and the reload: its stand-in is
	// listed too.
	n := len(after) - 1
	if n < len(before) || n > len(before)+1 || !slices.Equal(after[:len(before)], before) || after[n] != "hello 0" {
		t.Errorf("after the reload the list is %q; before it %q: want the same, then the new hello", after, before)
	}
	if got := text(t, ctx, "#sent-log tfoot"); !strings.Contains(got, fmt.Sprintf("%d messages", len(after))) {
		t.Errorf("total %q, want %d messages", got, len(after))
	}
	shotOf(t, ctx, "#sent-log", "1-reloaded")

	found, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const k = Object.keys(localStorage).find(k => k.startsWith("fedcast-sent:Reload study:"));
		if (k) localStorage.setItem(k, '{"v":1,"sent":[{"type":"upd');
		return !!k;
	})()`))
	if err != nil || !found {
		t.Fatalf("no record of the sent messages in localStorage (%v)", err)
	}
	reload("reloading with a damaged record")
	if got := listed(); !slices.Equal(got, []string{"hello 0"}) {
		t.Errorf("with a damaged record the list is %q, want the new hello alone", got)
	}
	if got := text(t, ctx, "#sent-log tbody"); strings.Count(got, "could not be read") != 1 {
		t.Errorf("the list should say once that earlier messages could not be read:\n%s", got)
	}
	shotOf(t, ctx, "#sent-log", "2-damaged")
}

// shortFile writes lha.csv cut to its first 5 days, far too short for
// any study: a page that chooses it joins present only.
func shortFile(t *testing.T) string {
	t.Helper()
	full, err := os.ReadFile(fixture(t, "lha.csv"))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "short.csv")
	if err := os.WriteFile(short, []byte(strings.Join(strings.SplitAfter(string(full), "\n")[:6], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return short
}
