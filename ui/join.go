package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/wasm/client"
	"github.com/vugu/vugu"
)

// Session is the LHA's connection to the coordinator as the page needs it;
// *client.Session implements it.
type Session interface {
	// Run trains until the study finishes, reporting to obs.
	Run(ctx context.Context, d *series.Dataset, obs client.Observer) error
	// Model is the latest global model (the final one after Run returns nil).
	Model() []float64
	Close() error
}

// Connector dials the coordinator for a join link, sends hello and
// returns the session and its welcome (study, LHA name, round log).
type Connector func(ctx context.Context, link string) (Session, *protocol.Welcome, error)

// DialClient is the Connector of the real app: client.Join with opt.
func DialClient(opt *client.Options) Connector {
	return func(ctx context.Context, link string) (Session, *protocol.Welcome, error) {
		s, err := client.Join(ctx, link, "", opt)
		if err != nil {
			return nil, nil, err
		}
		w := &protocol.Welcome{Study: s.Study(), LHA: s.LHA(), Log: s.Log(), State: protocol.StateWaiting}
		switch {
		case s.Finished() != nil:
			w.State = protocol.StateFinished
		case len(w.Log) > 0:
			w.State = protocol.StateRunning
		}
		return s, w, nil
	}
}

// Phase is where the LHA page stands.
type Phase string

const (
	PhaseConnecting Phase = "connecting" // dialling the coordinator
	PhaseReady      Phase = "ready"      // study shown; choose a file, then join
	PhaseRunning    Phase = "running"    // taking part in the rounds
	PhaseFinished   Phase = "finished"   // study over; forecast shown
	PhaseFailed     Phase = "failed"     // cannot go on (JoinProblem or RunProblem says why)
)

// Local training states reported by the session (wasm/client.State names).
const (
	StatusWaiting      = string(client.StateWaiting)
	StatusSampled      = string(client.StateSampled)
	StatusTraining     = string(client.StateTraining)
	StatusSent         = string(client.StateSent)
	StatusReconnecting = string(client.StateReconnecting)
	StatusFinished     = string(client.StateFinished)
)

// SentEntry is one message that left this computer.
type SentEntry struct {
	At    time.Time
	Type  string // protocol message type: hello or update
	Bytes int64  // websocket frame payload size
	Round int    // 0 for hello
	What  string // in words
}

// RoundReport is one released round as the LHA sees it.
type RoundReport struct {
	Round int
	// Epsilon is the coordinator's ε after the round; LocalEpsilon is the
	// same recomputed in this browser from the public parameters and the
	// round log.
	Epsilon, LocalEpsilon float64
	// TookPart: this LHA was sampled and its update was sent.
	TookPart bool
}

// AreaSummary describes one area of the chosen file.
type AreaSummary struct {
	Name        string
	First, Last string // dates
	Days        int
	Total       float64
}

// PreviewRow is one day of the selected area.
type PreviewRow struct {
	Date     string
	Cases    string
	Smoothed string
}

// Forecast is the model's forecast for one area.
type Forecast struct {
	Area     string
	InputEnd time.Time // last day of the input window
	Target   time.Time // the day forecast
	Value    float64   // model output (unclamped)
	Chart    *Chart
}

// Shown is the forecast as displayed: never below zero.
func (f Forecast) Shown() string { return FormatCount(math.Max(0, f.Value)) }

// TargetDate formats the forecast's date.
func (f Forecast) TargetDate() string { return f.Target.Format("Monday 2 January 2006") }

// JoinState is the state of the LHA page. All fields are read by the
// components under the render lock; the methods take the lock themselves
// and are safe to call from any goroutine.
type JoinState struct {
	Env     vugu.EventEnv
	Link    string // the join link (with the token in its fragment)
	Connect Connector
	// Yield, when set, is called between training steps about every 30 ms
	// to let the browser repaint (a short sleep). The browser app skips
	// it while the page is hidden: hidden tabs get no paints, and their
	// timers are throttled to a second or more.
	Yield func()

	Phase       Phase
	JoinProblem *Problem

	Welcome *protocol.Welcome // study, LHA name, state, round log

	// The chosen file.
	FileName    string
	FileBytes   int
	Reading     bool
	Data        *series.Dataset
	DataProblem *Problem
	Areas       []AreaSummary
	Area        string // the area shown in the plot and preview
	DataChart   *Chart
	Preview     []PreviewRow
	Dragging    bool

	// Training.
	Status                string // StatusWaiting …
	Round                 int    // rounds released so far
	TrainRound            int    // round being trained (when sampled)
	Step, Steps           int
	Epsilon, LocalEpsilon float64
	EpsilonChecked        bool // at least one round compared
	EpsilonMatch          bool
	Rounds                []RoundReport
	TrainTime             time.Duration // wall time of the last local training
	RunProblem            *Problem
	Sent                  []SentEntry

	// After training.
	Forecasts []Forecast
	Metrics   *metrics.Result
	// Baseline is the no-change forecast (the last 7-day average) on the
	// same test windows as Metrics.
	Baseline    *metrics.Result
	MetricsNote string

	session    Session
	cancel     context.CancelFunc
	lastYield  time.Time
	trainStart time.Time
}

// lock and unlock wrap the event env; without one (tests) they do nothing.
func (s *JoinState) lock() {
	if s.Env != nil {
		s.Env.Lock()
	}
}

func (s *JoinState) unlock() {
	if s.Env != nil {
		s.Env.UnlockRender()
	}
}

// Start connects to the coordinator in a goroutine.
func (s *JoinState) Start(ctx context.Context) {
	s.lock()
	s.Phase = PhaseConnecting
	s.unlock()
	go s.connect(ctx)
}

func (s *JoinState) connect(ctx context.Context) {
	if s.Connect == nil {
		s.fail(&Problem{Title: "This page cannot connect", Fix: "Reload the page."})
		return
	}
	sess, w, err := s.Connect(ctx, s.Link)
	s.lock()
	defer s.unlock()
	if err != nil {
		s.Phase = PhaseFailed
		s.JoinProblem = JoinProblem(err)
		return
	}
	s.session = sess
	s.Welcome = w
	s.Phase = PhaseReady
	// The hello has already left this computer: list it now, not only once
	// the LHA joins the training.
	if t, ok := sess.(interface{ TakeSent() []client.Outgoing }); ok {
		for _, o := range t.TakeSent() {
			s.recordSent(o.Type, int64(o.Bytes), o.Round)
		}
	}
	if n := len(w.Log); n > 0 {
		s.Round = w.Log[n-1].Round
		s.Epsilon = w.Log[n-1].Epsilon
	}
	if s.Data != nil {
		s.checkAgainstStudy()
	}
}

func (s *JoinState) fail(p *Problem) {
	s.lock()
	s.Phase = PhaseFailed
	s.JoinProblem = p
	s.unlock()
}

// JoinProblem explains a failure to join.
func JoinProblem(err error) *Problem {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		switch pe.Code {
		case protocol.CodeUnauthorized:
			return &Problem{Title: "This join link is not valid", Detail: pe.Message,
				Fix: "Open the exact link your study coordinator sent you (it ends in /join# followed by a code). If it still fails, ask the coordinator for a new link."}
		case protocol.CodeReplaced:
			return &Problem{Title: "This link was opened in another tab or on another computer", Detail: pe.Message,
				Fix: "Use only one window per link. Close the other one and reload this page."}
		case protocol.CodeVersion:
			return &Problem{Title: "This page and the coordinator do not match", Detail: pe.Message,
				Fix: "Reload the page (your browser may hold an old copy). If it persists, tell your study coordinator."}
		case protocol.CodeFinished:
			return &Problem{Title: "This study has already ended", Detail: pe.Message,
				Fix: "Nothing to do: the study coordinator has the final model."}
		}
		return &Problem{Title: "The coordinator refused the connection", Detail: pe.Error(),
			Fix: "Reload the page in a minute. If it persists, tell your study coordinator."}
	}
	return &Problem{Title: "The study coordinator cannot be reached", Detail: err.Error(),
		Fix: "Check your internet connection and reload the page. If it persists, the coordinator may be offline: tell your study coordinator."}
}

// windowOptions are the study's windowing settings.
func (s *JoinState) windowOptions() (series.WindowOptions, error) {
	st := s.Welcome.Study
	opt := series.WindowOptions{History: st.History, Horizon: st.Horizon}
	if st.Smoothing != "" {
		sm, err := series.ParseSmoothing(st.Smoothing)
		if err != nil {
			return opt, err
		}
		opt.Smoothing = sm
	}
	var err error
	if st.From != "" {
		if opt.From, err = time.Parse(time.DateOnly, st.From); err != nil {
			return opt, fmt.Errorf("ui: study start %q: %w", st.From, err)
		}
	}
	if st.To != "" {
		if opt.To, err = time.Parse(time.DateOnly, st.To); err != nil {
			return opt, fmt.Errorf("ui: study end %q: %w", st.To, err)
		}
	}
	return opt, nil
}

// LoadFile parses a chosen file (in the caller's goroutine: the bytes are
// already in memory). It takes the lock itself.
func (s *JoinState) LoadFile(name string, data []byte) {
	d, err := series.Parse(bytes.NewReader(data), name)
	s.lock()
	defer s.unlock()
	s.Reading = false
	s.FileName, s.FileBytes = name, len(data)
	s.Data, s.DataProblem, s.Areas, s.DataChart, s.Preview = nil, nil, nil, nil, nil
	if err != nil {
		s.DataProblem = DataProblem(err)
		return
	}
	s.Data = d
	for _, r := range d.Regions {
		total := 0.0
		for _, v := range r.Cases {
			total += v
		}
		s.Areas = append(s.Areas, AreaSummary{Name: r.Name, First: r.Start.Format(time.DateOnly),
			Last: r.End().Format(time.DateOnly), Days: len(r.Cases), Total: total})
	}
	s.Area = d.Regions[0].Name
	s.refreshArea()
	if s.Welcome != nil {
		s.checkAgainstStudy()
	}
}

// FileError reports a file that could not be read at all.
func (s *JoinState) FileError(name string, err error) {
	s.lock()
	defer s.unlock()
	s.Reading = false
	s.FileName = name
	s.Data = nil
	s.DataProblem = &Problem{Title: "The file could not be opened", Detail: err.Error(),
		Fix: "Choose the file again. If it is on a network drive, copy it to this computer first."}
}

// checkAgainstStudy checks that the data yield training windows with the
// study's settings. Call with the lock held.
func (s *JoinState) checkAgainstStudy() {
	opt, err := s.windowOptions()
	if err == nil {
		var areas []series.Area
		areas, err = series.MakeWindows(s.Data, opt)
		if err == nil {
			n := 0
			for _, a := range areas {
				n += len(a.Windows)
			}
			if n == 0 {
				err = series.ErrTooShort
			}
		}
	}
	if err != nil {
		p := DataProblem(err)
		if st := s.Welcome.Study; st.From != "" || st.To != "" {
			p.Fix = fmt.Sprintf("This study uses the days from %s to %s. Export a file that covers them (plus 3 days before and %d after), then choose it again.",
				orDash(st.From), orDash(st.To), st.Horizon+3)
		}
		s.DataProblem = p
		s.Data = nil
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// SelectArea shows another area of the file.
func (s *JoinState) SelectArea(name string) {
	s.Area = name
	s.refreshArea()
}

// refreshArea rebuilds the plot and preview of the selected area. Call
// with the lock held.
func (s *JoinState) refreshArea() {
	if s.Data == nil {
		return
	}
	r := s.Data.Region(s.Area)
	if r == nil {
		return
	}
	sm := s.smoothing()
	avg := make([]float64, len(r.Cases))
	series.MovingAverage7(avg, r.Cases, sm)
	raw := make([]Point, len(r.Cases))
	smooth := make([]Point, len(r.Cases))
	for i, v := range r.Cases {
		x := Day(r.Date(i))
		raw[i] = Point{x, v}
		smooth[i] = Point{x, avg[i]}
	}
	s.DataChart = &Chart{
		Title:  "Reported cases in " + r.Name,
		XLabel: "reporting date",
		YLabel: "cases per day",
		Dates:  true,
		Lines: []Line{
			{Name: "reported each day", Class: "raw", Points: raw, Bars: true},
			{Name: "7-day average (" + sm.String() + ")", Class: "smooth", Points: smooth},
		},
	}
	s.Preview = s.Preview[:0]
	from := len(r.Cases) - 10
	if from < 0 {
		from = 0
	}
	for i := len(r.Cases) - 1; i >= from; i-- {
		row := PreviewRow{Date: r.Date(i).Format("Mon 2 Jan 2006"), Cases: FormatCount(r.Cases[i]), Smoothed: "not yet known"}
		if !math.IsNaN(avg[i]) {
			row.Smoothed = strconv.FormatFloat(avg[i], 'f', 1, 64)
		}
		s.Preview = append(s.Preview, row)
	}
}

func (s *JoinState) smoothing() series.Smoothing {
	if s.Welcome != nil {
		if sm, err := series.ParseSmoothing(s.Welcome.Study.Smoothing); err == nil {
			return sm
		}
	}
	return series.Centered
}

// CanJoin reports whether the join button is active.
func (s *JoinState) CanJoin() bool {
	return s.Phase == PhaseReady && s.Data != nil && s.session != nil && s.Welcome.State != protocol.StateFinished
}

// Join starts taking part in the training (call under the render lock,
// from the button's event handler).
func (s *JoinState) Join(ctx context.Context) {
	if !s.CanJoin() {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.Phase = PhaseRunning
	s.Status = StatusWaiting
	sess, d := s.session, s.Data
	go func() {
		err := sess.Run(ctx, d, s.Observer())
		model := sess.Model()
		s.lock()
		defer s.unlock()
		if err != nil {
			s.Phase = PhaseFailed
			s.RunProblem = RunProblem(err)
			return
		}
		s.Phase = PhaseFinished
		s.Status = StatusFinished
		s.forecast(model)
	}()
}

// RunProblem explains why training stopped.
func RunProblem(err error) *Problem {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &Problem{Title: "The coordinator stopped this session", Detail: pe.Error(),
			Fix: "Reload the page to join again. If it persists, tell your study coordinator."}
	}
	if errors.Is(err, context.Canceled) {
		return &Problem{Title: "You stopped taking part", Fix: "Reload the page to join again."}
	}
	return &Problem{Title: "Training stopped", Detail: err.Error(),
		Fix: "Reload the page to join again; the study goes on without you meanwhile. If it persists, tell your study coordinator."}
}

// Observer returns the client callbacks that update this state.
func (s *JoinState) Observer() client.Observer {
	return client.Observer{
		State:    func(st client.State) { s.SetStatus(string(st)) },
		Progress: s.Progress,
		Sent:     func(o client.Outgoing) { s.RecordSent(o.Type, int64(o.Bytes), o.Round) },
		Result: func(r client.Result) {
			s.RoundDone(RoundReport{Round: r.Round, Epsilon: r.Epsilon, LocalEpsilon: r.LocalEpsilon, TookPart: r.Sampled})
		},
	}
}

// SetStatus records the session's state (waiting, sampled, training, sent).
func (s *JoinState) SetStatus(status string) {
	s.lock()
	s.Status = status
	if status == StatusSampled || status == StatusTraining {
		s.Step = 0
	}
	s.unlock()
}

// Progress records local training progress for round, and calls Yield.
func (s *JoinState) Progress(round, step, steps int) {
	now := time.Now()
	s.lock()
	s.TrainRound, s.Step, s.Steps = round, step, steps
	s.Status = StatusTraining
	if step == 0 {
		s.trainStart = now
	} else if step == steps && !s.trainStart.IsZero() {
		s.TrainTime = now.Sub(s.trainStart)
	}
	s.unlock()
	if s.Yield != nil && time.Since(s.lastYield) > 30*time.Millisecond {
		s.Yield()
		s.lastYield = time.Now()
	}
}

// RecordSent records a message that left this computer.
func (s *JoinState) RecordSent(typ string, size int64, round int) {
	s.lock()
	s.recordSent(typ, size, round)
	s.unlock()
}

// recordSent is RecordSent with the lock held.
func (s *JoinState) recordSent(typ string, size int64, round int) {
	e := SentEntry{At: time.Now(), Type: typ, Bytes: size, Round: round}
	switch typ {
	case "hello":
		e.What = "the join code from your link (says who you are to the coordinator)"
	case "update":
		e.What = fmt.Sprintf("round %d: the model changes computed here, clipped", round)
	default:
		e.What = typ
	}
	s.Sent = append(s.Sent, e)
}

// RoundDone records a released round.
func (s *JoinState) RoundDone(r RoundReport) {
	s.lock()
	defer s.unlock()
	s.Round = r.Round
	s.Epsilon, s.LocalEpsilon = r.Epsilon, r.LocalEpsilon
	s.EpsilonChecked = true
	s.EpsilonMatch = epsilonMatches(r.Epsilon, r.LocalEpsilon)
	s.Rounds = append(s.Rounds, r)
	if s.Status != StatusFinished {
		s.Status = StatusWaiting
	}
}

// epsilonMatches compares ε figures to the 1e-9 relative (both come from
// the same accountant code; the difference is rounding only).
func epsilonMatches(a, b float64) bool {
	if math.IsInf(a, 1) && math.IsInf(b, 1) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
}

// forecast computes each area's forecast and the local test metrics from
// the final model. Call with the lock held.
func (s *JoinState) forecast(params []float64) {
	if s.Data == nil || s.Welcome == nil || len(params) == 0 {
		return
	}
	st := s.Welcome.Study
	if len(st.Layers) < 2 {
		return
	}
	m := nn.NewMLP(st.Layers...)
	features, err := model.Parse(st.Features)
	if err != nil {
		s.MetricsNote = "The study's model type is unknown to this page: no forecast."
		return
	}
	damping := st.Damping
	if damping == 0 {
		damping = 1
	}
	if model.CheckDamping(damping) != nil {
		s.MetricsNote = "The study's damping is out of range: no forecast."
		return
	}
	if m.NumParams() != len(params) {
		s.MetricsNote = fmt.Sprintf("The final model has %d numbers, the study's layout %d: no forecast.", len(params), m.NumParams())
		return
	}
	opt, err := s.windowOptions()
	if err != nil {
		s.MetricsNote = err.Error()
		return
	}
	live := opt
	live.From, live.To = time.Time{}, time.Time{}
	s.Forecasts = s.Forecasts[:0]
	out := make([]float64, 1)
	for _, r := range s.Data.Regions {
		x, inputEnd, target, err := series.LatestInput(r, live)
		if err != nil {
			continue
		}
		features.PredictDamped(m, params, x, out, damping)
		s.Forecasts = append(s.Forecasts, Forecast{Area: r.Name, InputEnd: inputEnd, Target: target, Value: out[0],
			Chart: forecastChart(r, s.smoothing(), inputEnd, target, out[0])})
	}
	areas, err := series.MakeWindows(s.Data, opt)
	if err != nil {
		s.MetricsNote = err.Error()
		return
	}
	_, test := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
	x, y := series.Stack(test)
	if len(y) == 0 {
		s.MetricsNote = "Your file has no test days: all its windows were used for training."
		return
	}
	yhat := make([]float64, len(y))
	features.PredictDamped(m, params, x, yhat, damping)
	res := metrics.Compute(y, yhat)
	s.Metrics = &res
	model.Persistence(x, yhat)
	base := metrics.Compute(y, yhat)
	s.Baseline = &base
}

// forecastChart plots the last six weeks of an area with its forecast.
func forecastChart(r *series.Region, sm series.Smoothing, inputEnd, target time.Time, value float64) *Chart {
	avg := make([]float64, len(r.Cases))
	series.MovingAverage7(avg, r.Cases, sm)
	from := len(r.Cases) - 42
	if from < 0 {
		from = 0
	}
	var raw, smooth []Point
	for i := from; i < len(r.Cases); i++ {
		x := Day(r.Date(i))
		raw = append(raw, Point{x, r.Cases[i]})
		smooth = append(smooth, Point{x, avg[i]})
	}
	last := r.Index(inputEnd)
	shown := math.Max(0, value)
	fc := []Point{{Day(inputEnd), avg[last]}, {Day(target), shown}}
	return &Chart{
		Title:  "Forecast for " + r.Name,
		XLabel: "date",
		YLabel: "cases per day (7-day average)",
		Dates:  true,
		Lines: []Line{
			{Name: "reported each day", Class: "raw", Points: raw, Bars: true},
			{Name: "7-day average", Class: "smooth", Points: smooth},
			{Name: "forecast", Class: "forecast", Points: fc, Markers: true},
		},
		VRefs: []Ref{{At: Day(r.End()), Label: "last reported day", Class: "today"}},
	}
}

// SentTotal is the number of bytes sent so far.
func (s *JoinState) SentTotal() int64 {
	var n int64
	for _, e := range s.Sent {
		n += e.Bytes
	}
	return n
}

// Close stops the session.
func (s *JoinState) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.session != nil {
		s.session.Close()
	}
}
