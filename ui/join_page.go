package ui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"
)

// JoinPage is the LHA page (join-page.vugu).
type JoinPage struct {
	S *JoinState // Required.
}

func (c *JoinPage) studyTitle() string {
	if n := c.S.Welcome.Study.Name; n != "" {
		return n
	}
	return "Forecasting study"
}

func (c *JoinPage) studyState() string {
	w := c.S.Welcome
	switch {
	case c.S.Phase == PhaseFinished || (w.State == protocol.StateFinished && c.S.Phase != PhaseReady):
		return "The study has ended."
	case c.S.Phase == PhaseReady && c.allReleased():
		return fmt.Sprintf("The study has ended: all %d rounds are done. You can still get the final model's forecast for your areas: "+
			"choose your file and press the button below.", c.S.Round)
	case c.S.Round > 0 && w.State == protocol.StateFinished:
		return fmt.Sprintf("The study has ended after %d of its %d planned rounds. "+
			"You can still get the final model's forecast for your areas: choose your file and press the button below.", c.S.Round, c.currentStudy().Rounds)
	case w.State == protocol.StateFinished:
		return "The study has ended before its first round, so there is no shared model to forecast with. Ask your study coordinator whether a new study is planned."
	case c.S.Round > 0 || w.State == protocol.StateRunning:
		return fmt.Sprintf("The study is running (%d of %d rounds done).", c.S.Round, w.Study.Rounds)
	case c.S.Phase == PhaseRunning:
		// After Join the stage knows more than the welcome did.
		if st, r := c.S.RunStage(time.Now()); st != StageStarting {
			return fmt.Sprintf("The study is running (%d of %d rounds done).", r-btoi(st == StageTraining || st == StageSent), w.Study.Rounds)
		}
	}
	return "The study has not started yet: round 1 begins when enough authorities have chosen their file and pressed Join."
}

// guardWords is the page's one verdict about the shared model, from the
// guard (package forecast): for the area shown first, which method its
// headline uses and why; "" before the forecast.
func (c *JoinPage) guardWords() string {
	if len(c.S.Forecasts) == 0 || c.S.Forecasts[0].Guard.Method == "" {
		return ""
	}
	return GuardWords(c.S.Forecasts)
}

// GuardWords sums up the guard over all areas: for how many the forecast
// shown comes from each method, then the first area's reason (all areas of a file usually share
// it), named as that area's when the file has more than one (its numbers
// are that area's), then how many model forecasts were held in.
func GuardWords(fs []Forecast) string {
	model, clamped := 0, 0
	for _, f := range fs {
		if f.Guard.Method == forecast.MethodModel {
			model++
		}
		if f.Guard.ModelClamped {
			clamped++
		}
	}
	var s string
	switch {
	case model == 0:
		s = "Each forecast shown is the no-change forecast (today's 7-day average)."
	case model == len(fs):
		s = "Each forecast shown is the shared model's."
	default:
		s = fmt.Sprintf("The forecast shown is the shared model's for %s and the no-change forecast (today's 7-day average) for the other %d.",
			Plural(model, "area"), len(fs)-model)
	}
	why := fs[0].Guard.Why()
	if len(fs) > 1 {
		why = strings.TrimSuffix(why, " "+fs[0].Guard.ClampNote())
		why = "In " + fs[0].Area + ", for example, " + strings.ToLower(why[:1]) + why[1:]
	}
	s += " " + why
	if clamped > 0 && (len(fs) > 1 || !fs[0].Guard.ModelClamped) {
		s += fmt.Sprintf(" The shared model's forecast was beyond any change in your own history for %s: held inside it and flagged.", Plural(clamped, "area"))
	}
	return s
}

// forecastRoundWords says which model a forecast asked for during the
// study was made with.
func (c *JoinPage) forecastRoundWords() string {
	return fmt.Sprintf("Made in this browser with the model released after round %d; nothing was sent.", c.S.ForecastRound)
}

// updateBytes is the size of one update frame: the model's numbers at 8
// bytes each plus the frame header.
func (c *JoinPage) updateBytes() int64 {
	return protocol.FrameSize(c.S.Welcome.Study.Params)
}

func (c *JoinPage) forecastWords() string {
	st := c.S.Welcome.Study
	avg := "a 7-day average centred on each day, so the last 3 reported days are not yet used"
	if st.Smoothing == "trailing" {
		avg = "a 7-day average of each day and the 6 before it"
	}
	return fmt.Sprintf("After the study, this page forecasts the daily cases of each of your areas %d days after the last day of its input. "+
		"The model reads %d days of %s.", st.Horizon, st.History, avg)
}

func (c *JoinPage) dropClass() string {
	if c.S.Dragging {
		return "dropzone dragging"
	}
	return "dropzone"
}

func (c *JoinPage) fileWords() string {
	if c.S.Reading {
		return "Reading " + c.S.FileName + "…"
	}
	return "Chosen: " + c.S.FileName + " (" + FormatBytes(int64(c.S.FileBytes)) + ")"
}

// dataClass is the class of the line that sums up the file.
func (c *JoinPage) dataClass() string {
	if c.S.Unusable != nil {
		return "notice notice-warning"
	}
	return "ok"
}

func (c *JoinPage) dataWords() string {
	d := c.S.Data
	first, last := d.Span()
	areas := "1 area"
	if n := len(d.Regions); n != 1 {
		areas = strconv.Itoa(n) + " areas"
	}
	total := 0.0
	for _, a := range c.S.Areas {
		total += a.Total
	}
	span := fmt.Sprintf("%s, from %s to %s, %s cases in total", areas, first.Format("2 Jan 2006"), last.Format("2 Jan 2006"), FormatCount(total))
	if c.S.Unusable != nil {
		return "The file was read: " + span + ". This study cannot use it, but you can still join: see below."
	}
	switch n := c.S.DataWarnings(); n {
	case 0:
		return "The file is fine: " + span + "."
	case 1:
		return "The file was read: " + span + ". Please read the warning below."
	default:
		return fmt.Sprintf("The file was read: %s. Please read the %d warnings below.", span, n)
	}
}

// noticeClass is the CSS class of a file notice.
func (c *JoinPage) noticeClass(n series.Notice) string { return "notice notice-" + string(n.Level) }

// noticeLead starts a notice's line: "Warning: " for warnings.
func (c *JoinPage) noticeLead(n series.Notice) string {
	if n.Level == series.Warning {
		return "Warning: "
	}
	return ""
}

func (c *JoinPage) areaRowClass(name string) string {
	if name == c.S.Area {
		return "selected"
	}
	return ""
}

// clock says when a message left: the time, and the day too when it was
// not today (the list is kept across reloads, and a study runs for days).
func (c *JoinPage) clock(t time.Time) string {
	if t.Format(time.DateOnly) != time.Now().In(t.Location()).Format(time.DateOnly) {
		return t.Format("2 Jan 15:04:05")
	}
	return t.Format("15:04:05")
}

// The status line: roundWords, statusWords, scheduleWords and trainWords
// all read one stage (JoinState.RunStage), so they name the same round.

func (c *JoinPage) roundWords() string {
	st, r := c.S.RunStage(time.Now())
	T := c.S.Welcome.Study.Rounds
	switch st {
	case StageStarting:
		return fmt.Sprintf("Waiting for round 1 of %d", T)
	case StageTraining, StageSent:
		return fmt.Sprintf("Round %d of %d", r, T)
	case StageFinished:
		return fmt.Sprintf("Study ended: %d of %d rounds done", r, T)
	}
	if r == 0 {
		return fmt.Sprintf("Round 1 of %d under way", T)
	}
	return fmt.Sprintf("Round %d of %d done", r, T)
}

func (c *JoinPage) statusWords() string {
	st, _ := c.S.RunStage(time.Now())
	switch st {
	case StageStarting:
		return "ready: waiting for the other authorities"
	case StageTraining:
		if c.trained() {
			return "trained, waiting to send"
		}
		return "training on your data"
	case StageSent:
		return "changes sent, waiting for the round's result"
	case StageReconnecting:
		return "connection lost, reconnecting…"
	case StageFinished:
		return "study finished"
	}
	return "waiting for the next round"
}

// scheduleWords says when the next round opens and by when an update
// must arrive, from the study's public schedule ("" when the stage has
// nothing to add). Times are this computer's clock.
func (c *JoinPage) scheduleWords() string {
	if c.S.Phase != PhaseRunning {
		return ""
	}
	now := time.Now()
	st, r := c.S.RunStage(now)
	opens, trainBy, ok := c.S.NextRound(now)
	clock := func(t time.Time) string { return t.Local().Format("15:04:05") }
	switch {
	case st == StageStarting:
		return "Round 1 starts when enough authorities have chosen their file and pressed Join. You are ready: keep this page open."
	case !ok:
		return ""
	case st == StageSent || st == StageTraining:
		by, release, due := c.S.RoundDue(r, now)
		switch {
		case !due:
			return ""
		case st == StageSent:
			return fmt.Sprintf("Round %d's result comes at %s.", r, clock(release))
		}
		return roundDueWords(r, by, release)
	case st == StageWaiting && c.S.PresentOnly:
		return fmt.Sprintf("Rounds run on a fixed timetable: the next opens at %s.", clock(opens))
	case st == StageWaiting:
		return fmt.Sprintf("Rounds run on a fixed timetable: the next opens at %s; if this computer is picked, its training must be sent by %s.",
			clock(opens), clock(trainBy))
	}
	return ""
}

// roundDueWords says when round r ends and by when its changes must be
// sent (this computer's clock).
func roundDueWords(r int, by, release time.Time) string {
	clock := func(t time.Time) string { return t.Local().Format("15:04:05") }
	return fmt.Sprintf("Round %d ends at %s: the changes must be sent by %s.", r, clock(release), clock(by))
}

func (c *JoinPage) trainWords() string {
	st, r := c.S.RunStage(time.Now())
	took := ""
	if c.S.TrainTime > 0 {
		took = fmt.Sprintf(" It took %s in this browser.", FormatDuration(c.S.TrainTime))
	}
	if n := len(c.S.Late); n > 0 && c.S.Late[n-1] == c.S.TrainRound && !(st == StageTraining && r > c.S.TrainRound) {
		return fmt.Sprintf("Local training in round %d: not finished in time (step %d of %d when the changes had to leave). "+
			"A stand-in of the same size, holding only zeros, was sent on time instead, so this round went on without your data. "+
			"To make rounds shorter, lower Examples per round (reload the page to change it) or close other programs.",
			c.S.TrainRound, c.S.Step, c.S.Steps)
	}
	switch {
	case c.S.PresentOnly:
		return "Local training: none. This study cannot use your file, so this computer takes part as present only (see below)."
	case st == StageTraining && c.trained():
		return fmt.Sprintf("Local training in round %d: done.%s The changes leave at a set moment before the round ends, "+
			"the same for every authority, picked or not.", r, took)
	case st == StageTraining && c.S.TrainRound == r && c.S.Steps > 0:
		return fmt.Sprintf("Local training in round %d: step %d of %d.", r, c.S.Step, c.S.Steps)
	case st == StageTraining:
		return fmt.Sprintf("Local training in round %d: starting.", r)
	case st == StageSent:
		return fmt.Sprintf("Local training in round %d: done.%s", r, took)
	case c.S.Steps == 0 && st == StageFinished:
		return "Local training: the study has ended; this computer was not picked."
	case c.S.Steps == 0:
		return "Local training: not picked yet."
	case st == StageFinished:
		return fmt.Sprintf("Local training: the study has ended; this computer last trained in round %d.%s", c.S.TrainRound, took)
	}
	return fmt.Sprintf("Local training: last in round %d.%s", c.S.TrainRound, took)
}

// trained reports whether this round's local training has taken its last
// step: its answer waits for the round's set moment (session.answer).
func (c *JoinPage) trained() bool {
	st, r := c.S.RunStage(time.Now())
	return st == StageTraining && c.S.Status == StatusTraining && c.S.TrainRound == r && c.S.Steps > 0 && c.S.Step == c.S.Steps
}

func (c *JoinPage) roundFraction() float64 {
	if t := c.S.Welcome.Study.Rounds; t > 0 {
		return float64(c.S.Round) / float64(t)
	}
	return 0
}

func (c *JoinPage) stepFraction() float64 {
	if c.S.Steps > 0 {
		return float64(c.S.Step) / float64(c.S.Steps)
	}
	return 0
}

func (c *JoinPage) epsFraction() float64 {
	b := c.S.Welcome.Study.Epsilon
	if b <= 0 || math.IsInf(b, 0) || math.IsNaN(c.S.Epsilon) {
		return 0
	}
	return math.Min(1, c.S.Epsilon/b)
}

// epsStyle sizes the budget bar and stretches its green-to-red gradient
// over the whole track, so the bar turns red only as the budget runs out
// (a gradient over the filled part alone ends red at any share).
func (c *JoinPage) epsStyle() string {
	f := c.epsFraction()
	if f <= 0 {
		return c.width(0)
	}
	return c.width(f) + "; background-size: " + strconv.FormatFloat(100/f, 'f', 1, 64) + "% 100%"
}

func (c *JoinPage) width(f float64) string {
	return "width: " + strconv.FormatFloat(math.Max(0, math.Min(1, f))*100, 'f', 1, 64) + "%"
}

func (c *JoinPage) matchClass() string {
	switch {
	case !c.S.EpsilonChecked:
		return "check pending"
	case c.S.EpsilonMatch:
		return "check ok"
	}
	return "check bad"
}

func (c *JoinPage) matchWords() string {
	switch {
	case !c.S.EpsilonChecked:
		return "This browser recomputes the budget from the study settings after every round."
	case c.S.EpsilonMatch:
		return fmt.Sprintf("✓ Recomputed in this browser: ε = %s. It matches the coordinator's figure.", FormatEpsilon(c.S.LocalEpsilon))
	}
	return fmt.Sprintf("✗ Recomputed in this browser: ε = %s, but the coordinator says %s. Tell your study coordinator.",
		FormatEpsilon(c.S.LocalEpsilon), FormatEpsilon(c.S.Epsilon))
}

func (c *JoinPage) areaPageWords() string {
	from := c.S.AreaPage*AreasPerPage + 1
	to := min(from+AreasPerPage-1, len(c.S.Areas))
	return fmt.Sprintf("Areas %s–%s of %s", FormatCount(float64(from)), FormatCount(float64(to)), FormatCount(float64(len(c.S.Areas))))
}

func (c *JoinPage) previewTitle() string {
	if c.S.PreviewPage == 0 {
		return "Last days of " + c.S.Area
	}
	return "Days of " + c.S.Area
}

func (c *JoinPage) previewPageWords() string {
	return fmt.Sprintf("Page %s of %s (newest first)", FormatCount(float64(c.S.PreviewPage+1)), FormatCount(float64(c.S.PreviewPages())))
}

func (c *JoinPage) forecastPageWords() string {
	from := c.S.ForecastPage*ForecastsPerPage + 1
	to := min(from+ForecastsPerPage-1, len(c.S.Forecasts))
	return fmt.Sprintf("Areas %s–%s of %s", FormatCount(float64(from)), FormatCount(float64(to)), FormatCount(float64(len(c.S.Forecasts))))
}

func (c *JoinPage) estimateClass() string {
	if c.S.WouldMiss() {
		return "problem"
	}
	return "ok"
}

// estimateWords says how long a round should take here and whether that
// fits the coordinator's round.
func (c *JoinPage) estimateWords() string {
	examples := fmt.Sprintf("%s training examples", FormatCount(float64(c.S.PerRound)))
	if c.S.PerRound < c.S.Windows {
		examples = fmt.Sprintf("%s of your %s training examples", FormatCount(float64(c.S.PerRound)), FormatCount(float64(c.S.Windows)))
	}
	took := FormatDuration(c.S.RoundEstimate)
	if !strings.HasPrefix(took, "less than") {
		took = "about " + took
	}
	w := fmt.Sprintf("One round of training should take %s on this computer (%s per round).", took, examples)
	rt := c.S.RoundTime()
	switch {
	case rt <= 0:
		return w
	case c.S.WouldMiss():
		return w + fmt.Sprintf(" The coordinator waits only %s for each round, so your changes would probably arrive too late and not be counted. "+
			"Lower the number of examples per round below, or close other programs, until the estimate is well under %s.", FormatDuration(rt), FormatDuration(rt))
	}
	return w + fmt.Sprintf(" The coordinator waits %s for each round: that fits.", FormatDuration(rt))
}

func (c *JoinPage) limitValue() string {
	return strconv.FormatFloat(c.S.EpsilonLimit(), 'g', 6, 64)
}

func (c *JoinPage) windowsValue() string {
	n := c.S.MaxWindows
	if n <= 0 {
		n = session.DefaultMaxWindows
	}
	return strconv.Itoa(n)
}

func (c *JoinPage) limitWords() string {
	if st := c.S.Welcome.Study; !st.ClientLevelDP() {
		return "ε of at most this much. This study has no study-wide budget for it to check (privacy \"example\"), so it does not stop this browser: " +
			"your own example-level budget below does."
	}
	return fmt.Sprintf("ε of at most this much. Before each round it is picked for, this browser recomputes the budget the study would have spent after that round; "+
		"if it would pass your limit, it sends nothing (the study's own budget is ε = %s).", FormatEpsilon(c.S.Welcome.Study.Epsilon))
}

func (c *JoinPage) limitRunWords() string {
	st := c.S.Welcome.Study
	if !st.ClientLevelDP() {
		return exampleOnlyWords(st, c.S.ExampleBudget) + cyclicWords(st)
	}
	return fmt.Sprintf("Your own limit: ε = %s. This browser sends nothing in a round that would take the study past it.", FormatEpsilon(c.S.EpsilonLimit())) +
		c.S.exampleBudgetWords() + cyclicWords(st)
}

func (c *JoinPage) skipWords(k session.Skip) string {
	if k.Example {
		return exampleSkipWords(k)
	}
	return fmt.Sprintf("Round %d: you were picked, but nothing was sent: after that round the study would have spent ε = %s, more than your limit of ε = %s. "+
		"Your data took no part in it, and the study goes on without you.", k.Round, FormatEpsilon(k.Epsilon), FormatEpsilon(k.Limit))
}

func (c *JoinPage) outcomeClass(e SentEntry) string {
	switch e.Outcome {
	case OutcomeCounted:
		return "check ok"
	case OutcomeRefused:
		return "check bad"
	}
	return "muted"
}

func (c *JoinPage) outcomeWords(e SentEntry) string {
	switch {
	case e.Type != "update":
		return ""
	case e.Outcome == OutcomeCounted:
		return "counted"
	case e.Outcome == OutcomeRefused:
		return "not counted: " + e.Reason
	case e.Outcome == OutcomeUnknown:
		return "not known: the page was reloaded before the coordinator answered"
	}
	return "waiting for the coordinator"
}

func (c *JoinPage) messagesWords() string {
	if n := c.S.SentCount(); n != 1 {
		return FormatCount(float64(n)) + " messages"
	}
	return "1 message"
}

func (c *JoinPage) onMaxEpsilon(event vugu.DOMEvent) {
	c.S.SetMaxEpsilon(event.PropString("target", "value"))
}

func (c *JoinPage) onMaxWindows(event vugu.DOMEvent) {
	go c.S.SetMaxWindows(event.PropString("target", "value"))
}

func (c *JoinPage) onInsecureAck(event vugu.DOMEvent) {
	c.S.InsecureAck = event.PropBool("target", "checked")
}

func (c *JoinPage) onFileChange(event vugu.DOMEvent) {
	files := event.JSEventTarget().Get("files")
	if !files.Truthy() || files.Length() == 0 {
		return
	}
	c.read(event.EventEnv(), files.Index(0))
}

func (c *JoinPage) onDragOver(event vugu.DOMEvent) {
	event.PreventDefault()
	c.S.Dragging = true
}

func (c *JoinPage) onDragLeave(event vugu.DOMEvent) {
	c.S.Dragging = false
}

func (c *JoinPage) onDrop(event vugu.DOMEvent) {
	event.PreventDefault()
	c.S.Dragging = false
	dt := event.JSEvent().Get("dataTransfer")
	if !dt.Truthy() {
		return
	}
	files := dt.Get("files")
	if !files.Truthy() || files.Length() == 0 {
		return
	}
	c.read(event.EventEnv(), files.Index(0))
}

// read loads a File in a goroutine (the handler must not block).
func (c *JoinPage) read(env vugu.EventEnv, file js.Value) {
	name := file.Get("name").String()
	c.S.Reading = true
	c.S.FileName = name
	s := c.S
	go func() {
		r, size, err := openJSFile(file)
		if err != nil {
			s.FileError(name, err)
			return
		}
		s.LoadReader(name, r, size)
	}()
}

func (c *JoinPage) onNextStudy(event vugu.DOMEvent) {
	js.Global().Get("location").Call("reload")
}

func (c *JoinPage) onJoin(event vugu.DOMEvent) {
	c.S.Join(context.Background())
}

// rangeWords says an area's forecast range in plain words.
func (c *JoinPage) rangeWords(f Forecast) string {
	return fmt.Sprintf("Likely range: %s cases per day. Such ranges are meant to hold 19 times out of 20; "+
		"half of the time the count should fall %s.", f.Range95(), f.Range50())
}

// recentWords says how often the LHA's own recent outcomes fell inside the
// ranges this page would have given at the time.
func (c *JoinPage) recentWords() string {
	r := c.S.Recent
	if r.N == 0 {
		return "Your file is too short to check the ranges on your own past days."
	}
	return fmt.Sprintf("On your own recent days (%s), the outcome fell inside the 19-in-20 range %d times "+
		"and inside the half-the-time range %d times. Worked out in this browser; not sent anywhere.", CheckedWords(r.N), r.In95, r.In50)
}

// hubHref is the download link of the forecast as a hub CSV: a blob: URL
// made in this browser (see objectURL).
func (c *JoinPage) hubHref() string { return c.S.HubURL }

// hubFileName names the downloaded forecast after its last day of data,
// so that each week's file keeps its own name.
func (c *JoinPage) hubFileName() string { return c.forecastName() + ".csv" }

// publishFileName names the downloaded forecast to publish (ext ".csv")
// or its privacy marking (ext ".dp.json") like the hub file, as
// `fedcast forecast --publish-epsilon` names them beside its FILE.
func (c *JoinPage) publishFileName(ext string) string { return c.forecastName() + "-published" + ext }

// forecastName is "fedcast-forecast-" and the forecast's last day of data.
func (c *JoinPage) forecastName() string {
	name := "fedcast-forecast"
	if len(c.S.Forecasts) > 0 {
		name += "-" + c.S.Forecasts[0].InputEnd.Format(time.DateOnly)
	}
	return name
}

// CheckedWords is how the page quotes every count of forecasts checked
// against what happened (the test days' errors and the ranges' check):
// one unit, one phrasing, so two checks are never read as contradicting
// each other; a handful is called what it is.
func CheckedWords(n int) string {
	w := Plural(n, "past forecast") + ", all areas together"
	if n < 10 {
		w += "; only a few, so a rough indication"
	}
	return w
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// joinLabel is the join button's label: joining present only when the
// study cannot use the file.
func (c *JoinPage) joinLabel() string {
	switch {
	case c.S.Ended():
		return "Get the forecast"
	case c.S.Unusable != nil:
		return "Join as present only"
	}
	return "Join the training"
}

// readyWords says, before joining, what the button does.
func (c *JoinPage) readyWords() string {
	if c.nothingToForecast() {
		return "There is nothing to forecast with: the study ended before its first round released a model."
	}
	if c.S.Ended() {
		return "The study has ended, so nothing of yours is trained: when your file is checked, press the button, " +
			"and this browser makes the final model's forecast for your areas. Nothing about your file is sent."
	}
	return "When your file is checked, press the button. Keep this page open until the study ends; you can use other tabs meanwhile."
}

// nothingToForecast reports whether the page opened on a study that
// ended before any round: no model, so no button.
func (c *JoinPage) nothingToForecast() bool {
	return c.S.Ended() && c.S.Round == 0
}

// allReleased reports whether the page opened on a study whose every
// round was already released (the coordinator's welcome is read before
// its finished message, so the state alone does not tell).
func (c *JoinPage) allReleased() bool {
	return c.S.allReleased()
}

// PresentOnlyWords says, before joining, what joining with a file the
// study cannot use means.
const PresentOnlyWords = "You can still join, but you will only be counted as present: your data are not used. " +
	"This browser trains nothing; in every round it sends a stand-in of the same size as a real update, holding only zeros, " +
	"at the same moment as every other authority's answer. Nothing about your file is sent. " +
	"You still see the study's progress and its privacy budget, and you get its final model."

// PresentOnlyRunWords says, once joined present only, what happens and how
// to take part fully.
const PresentOnlyRunWords = "You are counted as present, and your data take no part in the shared model: this browser trains nothing " +
	"and sends a stand-in of zeros every round. To take part fully, prepare a file as described above, reload this page, choose it and join again."
