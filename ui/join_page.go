package ui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/protocol"
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
	case c.S.Phase == PhaseFinished || w.State == protocol.StateFinished:
		return "The study has ended."
	case c.S.Round > 0 || w.State == protocol.StateRunning:
		return fmt.Sprintf("The study is running (%d of %d rounds done).", c.S.Round, w.Study.Rounds)
	}
	return "The study has not started yet: rounds begin when the coordinator starts it."
}

// verdict says in words whether the forecast is worth having: it compares
// the model's typical miss on the LHA's own most recent days with that of
// the free forecast "no change" (today's 7-day average), in cases per day.
// It never judges from R², which on a few recent days says little.
func (c *JoinPage) verdict() string {
	return Verdict(c.S.Metrics, c.S.Baseline)
}

// Verdict is the page's verdict from the model's and the no-change
// forecast's metrics on the same test days ("" when either is missing).
func Verdict(m, base *metrics.Result) string {
	if m == nil || base == nil || m.N == 0 || math.IsNaN(m.MAE) || math.IsNaN(base.MAE) {
		return ""
	}
	diff := base.MAE - m.MAE
	days := fmt.Sprintf("Checked on %d recent days of your data kept out of the training (all areas together), the model missed by %s cases per day on average; assuming no change (today's 7-day average) missed by %s.",
		m.N, FormatCount(m.MAE), FormatCount(base.MAE))
	// Within 2 % (or 0.05 cases a day) the two are alike.
	if math.Abs(diff) <= math.Max(0.02*base.MAE, 0.05) {
		return days + " The model is about as good as assuming no change: its forecast adds little."
	}
	if diff > 0 {
		return days + fmt.Sprintf(" The model is better by %s cases per day (%s %% smaller error).",
			FormatCount(diff), FormatCount(100*diff/base.MAE))
	}
	return days + fmt.Sprintf(" The model is worse by %s cases per day: do not rely on its forecast; assuming no change is the better guess. "+
		"Studies with more authorities or a larger privacy budget give better models.", FormatCount(-diff))
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

func (c *JoinPage) dataWords() string {
	d := c.S.Data
	first, last := d.Span()
	areas := "1 area"
	if n := len(d.Regions); n != 1 {
		areas = strconv.Itoa(n) + " areas"
	}
	return fmt.Sprintf("The file is fine: %s, from %s to %s.", areas, first.Format("2 Jan 2006"), last.Format("2 Jan 2006"))
}

func (c *JoinPage) areaRowClass(name string) string {
	if name == c.S.Area {
		return "selected"
	}
	return ""
}

func (c *JoinPage) clock(t time.Time) string { return t.Format("15:04:05") }

func (c *JoinPage) roundWords() string {
	return fmt.Sprintf("Round %d of %d", c.S.Round, c.S.Welcome.Study.Rounds)
}

func (c *JoinPage) statusWords() string {
	switch c.S.Status {
	case StatusWaiting:
		return "waiting for the next round"
	case StatusSampled:
		return "picked for this round"
	case StatusTraining:
		return "training on your data"
	case StatusSent:
		return "changes sent, waiting for the others"
	case StatusReconnecting:
		return "connection lost, reconnecting…"
	case StatusFinished:
		return "study finished"
	}
	return c.S.Status
}

func (c *JoinPage) trainWords() string {
	if c.S.Steps == 0 {
		return "Local training: not picked yet."
	}
	w := fmt.Sprintf("Local training in round %d: step %d of %d.", c.S.TrainRound, c.S.Step, c.S.Steps)
	if c.S.Step == c.S.Steps && c.S.TrainTime > 0 {
		w += fmt.Sprintf(" It took %s in this browser.", c.S.TrainTime.Round(time.Millisecond))
	}
	return w
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
		data, err := readJSFile(file)
		if err != nil {
			s.FileError(name, err)
			return
		}
		s.LoadFile(name, data)
	}()
}

func (c *JoinPage) onArea(event vugu.DOMEvent) {
	c.S.SelectArea(event.PropString("target", "value"))
}

func (c *JoinPage) onJoin(event vugu.DOMEvent) {
	c.S.Join(context.Background())
}
