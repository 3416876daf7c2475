package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/metrics"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/vugu/vugu"
)

// Session is the LHA's connection to the coordinator as the page needs it;
// *session.Session implements it.
type Session interface {
	// Run trains until the study finishes, reporting to obs.
	Run(ctx context.Context, d *series.Dataset, obs session.Observer) error
	// Model is the latest global model (the final one after Run returns nil).
	Model() []float64
	Close() error
}

// Connector dials the coordinator for a join link (the token in the handshake) and
// returns the session and its welcome (study, LHA name, round log).
type Connector func(ctx context.Context, link string) (Session, *protocol.Welcome, error)

// DialClient is the Connector of the real app: session.Join with opt,
// whose Dial the caller sets (the browser's WebSocket dialer in package
// wasm).
func DialClient(opt *session.Options) Connector {
	return func(ctx context.Context, link string) (Session, *protocol.Welcome, error) {
		s, err := session.Join(ctx, link, "", opt)
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

// Local training states reported by the session (wasm/session.State names).
const (
	StatusWaiting      = string(session.StateWaiting)
	StatusSampled      = string(session.StateSampled)
	StatusTraining     = string(session.StateTraining)
	StatusSent         = string(session.StateSent)
	StatusReconnecting = string(session.StateReconnecting)
	StatusFinished     = string(session.StateFinished)
)

// SentEntry is one message that left this computer.
type SentEntry struct {
	At    time.Time
	Type  string // protocol message type: hello, ready, update or dummy
	Bytes int64  // websocket frame payload size
	Round int    // 0 for hello and ready
	What  string // in words
	// Outcome of an update: "" while the coordinator has not answered,
	// OutcomeCounted, or OutcomeRefused with Reason in plain words.
	Outcome string
	Reason  string
}

// Outcomes of a sent update.
const (
	OutcomeCounted = "counted"
	OutcomeRefused = "not counted"
)

// Page sizes of the areas table and of the day preview.
const (
	AreasPerPage   = 20
	PreviewPerPage = 10
)

// RoundReport is one released round as the LHA sees it.
type RoundReport struct {
	Round int
	// Epsilon is the coordinator's ε after the round; LocalEpsilon is the
	// same recomputed in this browser from the public parameters and the
	// round log.
	Epsilon, LocalEpsilon float64
	// PublicEpsilon is ε against the public in a study with a helper (0
	// without one).
	PublicEpsilon float64
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
	Value    float64   // the headlined value (the guard's method, inside the plausible band)
	// Quantiles are the headlined forecast's range at the hub levels, from
	// this LHA's own recent errors (package forecast; computed here, not
	// sent).
	Quantiles forecast.Quantiles
	Chart     *Chart
	// Guard is the guard's headline for the area: its method, the reason
	// and the shared model's own forecast beside it.
	Guard forecast.Headline
}

// Range95 says the 95 % range in words.
func (f Forecast) Range95() string {
	lo, hi, _ := f.Quantiles.Interval(0.95)
	return "between " + FormatCount(lo) + " and " + FormatCount(hi)
}

// Range50 says the 50 % range in words.
func (f Forecast) Range50() string {
	lo, hi, _ := f.Quantiles.Interval(0.5)
	return "between " + FormatCount(lo) + " and " + FormatCount(hi)
}

// Shown is the forecast as displayed: the median of the range (the
// model's output with the default calibrator, see package forecast), or
// the model's output when there is no range; never below zero.
func (f Forecast) Shown() string {
	if f.Quantiles != (forecast.Quantiles{}) {
		return FormatCount(f.Quantiles.Median())
	}
	return FormatCount(math.Max(0, f.Value))
}

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
	// Forecasting is true from the end of training until the final
	// model's forecasts, ranges and local scores are published (years of
	// data and hundreds of areas take seconds in a browser).
	Forecasting bool
	// ForecastRound is the round whose model the forecast shown was made
	// with when the LHA asked for it during the study (0: the final one).
	ForecastRound int

	Welcome *protocol.Welcome // study, LHA name, state, round log

	// The chosen file.
	FileName    string
	FileBytes   int
	Reading     bool
	Data        *series.Dataset
	DataProblem *Problem
	// DataNotices are what the reader did or noticed (series.Notice: which
	// column was taken, a running total converted, missing days, …),
	// shown under the file check in the reader's own words.
	DataNotices []series.Notice
	Areas       []AreaSummary
	AreaPage    int    // page of the areas table (AreasPerPage rows each)
	Area        string // the area shown in the plot and preview
	DataChart   *Chart
	Preview     []PreviewRow // one page of the selected area's days, newest first
	PreviewPage int          // 0: the newest PreviewPerPage days
	PreviewDays int          // days in the selected area
	Dragging    bool

	// Before joining: the training windows the study takes from the file,
	// the estimated time of one round here, and the LHA's own limits.
	Checking      bool // the file is being checked against the study
	Windows       int  // training windows the study gives in the file
	PerRound      int  // windows trained on per round (Windows or the cap)
	RoundEstimate time.Duration
	MaxWindows    int     // cap on windows per round (session.DefaultMaxWindows unless changed)
	MaxEpsilon    float64 // the LHA's own ε limit; 0: the study's budget
	LimitProblem  string  // the last limit typed could not be used
	InsecureAck   bool    // the LHA confirmed joining a research-mode study
	// Skips are rounds this LHA was picked for but sat out (its ε limit).
	Skips []session.Skip
	// ExampleBudget is the LHA's own example-level budget when the study
	// runs local DP-SGD (nil otherwise; strategy.go).
	ExampleBudget *session.ExampleBudget
	exampleSource func() (session.ExampleBudget, bool)

	// Fetch GETs a URL of the coordinator (the browser's fetch); when set,
	// a page whose study has ended watches the public status and offers
	// the next study run at the same link (the demo runs one after
	// another).
	Fetch func(ctx context.Context, url, token string) (status int, body []byte, err error)
	// NextStudy: a new study is open at this link; reloading joins it.
	NextStudy  bool
	watching   bool
	watchEvery time.Duration // 0: 3 s

	// Training.
	Status                string // StatusWaiting …
	Round                 int    // rounds released so far
	TrainRound            int    // round being trained (when sampled)
	Step, Steps           int
	Epsilon, LocalEpsilon float64
	PublicEpsilon         float64 // with a helper: ε against the public (argued)
	EpsilonChecked        bool    // at least one round compared
	EpsilonMatch          bool
	Rounds                []RoundReport
	TrainTime             time.Duration // wall time of the last local training
	// JoinedAt is when Join was pressed: the page then says ready (it
	// counts for the coordinator from then on; see Missed).
	JoinedAt   time.Time
	RunProblem *Problem
	Sent       []SentEntry

	// After training.
	Forecasts    []Forecast
	ForecastPage int                    // page of Forecasts shown (ForecastsPerPage each)
	Recent       session.RecentCoverage // how often recent outcomes fell inside the ranges (local only)
	Hub          string                 // the forecasts as a hub CSV, for the download
	HubURL       string                 // blob: URL of Hub for the download link ("" outside a browser)
	Publishing   PublishState           // the "Publish" option (publish.go)
	Metrics      *metrics.Result
	// Baseline is the no-change forecast (the last 7-day average) on the
	// same test windows as Metrics.
	Baseline    *metrics.Result
	MetricsNote string

	session    Session
	prepared   *session.TrainingSet   // for the study and file shown
	public     *forecast.PublicInputs // a weekly study's public inputs (weekly.go)
	cancel     context.CancelFunc
	lastYield  time.Time
	lastRender time.Time
	trainStart time.Time
	issuedMem  []byte // the issued forecasts when IssuedStore is nil (issued.go)
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

// yieldNow calls Yield when set. Only from a goroutine of our own, never
// from an event handler (the browser cannot run anything else until a
// handler returns).
func (s *JoinState) yieldNow() {
	if s.Yield != nil {
		s.Yield()
		s.lastYield = time.Now()
	}
}

// publish applies fn to the state under the lock and asks for a render,
// yielding before and after: the work before, the render and the work
// after then run as separate browser tasks, none of them long. Call it
// from a goroutine of our own.
func (s *JoinState) publish(fn func()) {
	s.yieldNow()
	s.lock()
	fn()
	s.unlock()
	s.yieldNow()
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
		var pe *protocol.Error
		if errors.As(err, &pe) && pe.Code == protocol.CodeFinished {
			go s.WatchForNext(ctx)
		}
		return
	}
	s.session = sess
	s.Welcome = w
	s.Phase = PhaseReady
	// The hello has already left this computer: list it now, not only once
	// the LHA joins the training.
	if t, ok := sess.(interface{ TakeSent() []session.Outgoing }); ok {
		for _, o := range t.TakeSent() {
			s.recordSent(o.Type, int64(o.Bytes), o.Round)
		}
	}
	if n := len(w.Log); n > 0 {
		s.Round = w.Log[n-1].Round
		s.Epsilon = w.Log[n-1].Epsilon
	}
	if s.Data != nil {
		go s.checkStudy()
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
		return &Problem{Title: "The coordinator refused the connection", Detail: TechLine(pe),
			Fix: "Reload the page in a minute. If it persists, tell your study coordinator."}
	}
	return &Problem{Title: "The study coordinator cannot be reached", Detail: TechLine(err),
		Fix: "Check your internet connection and reload the page. If it persists, the coordinator may be offline: tell your study coordinator."}
}

// LoadFile parses a chosen file and checks it against the study, in the
// caller's goroutine (the bytes are already in memory). It takes the lock
// itself, only to publish results: the parsing and checking in between
// call Yield about every 30 ms so a large file does not freeze the page.
func (s *JoinState) LoadFile(name string, data []byte) {
	s.LoadReader(name, bytes.NewReader(data), len(data))
}

// LoadReader is LoadFile reading the file's size bytes from r. The bytes
// are read first (the encoding is decided on the whole file), then parsed
// through a reader that yields about every 30 ms, so a large file lets the
// browser paint while it is read and while its rows are parsed.
func (s *JoinState) LoadReader(name string, r io.Reader, size int) {
	s.lock()
	s.Reading = true
	s.FileName, s.FileBytes = name, size
	s.Data, s.DataProblem, s.DataNotices, s.Areas, s.DataChart, s.Preview = nil, nil, nil, nil, nil, nil
	s.prepared, s.Windows, s.PerRound, s.RoundEstimate = nil, 0, 0, 0
	s.unlock()

	var d *series.Dataset
	data, err := readSized(&yieldingReader{r: r, yield: s.Yield}, size)
	if err != nil {
		err = &series.ParseError{File: name, Err: fmt.Errorf("series: read: %w", err), Hint: "The file could not be read."}
	} else {
		d, err = series.ParseBytesVia(data, name, func(r io.Reader) io.Reader { return &yieldingReader{r: r, yield: s.Yield} })
	}
	data = nil // the parsed series are all that is kept
	var areas []AreaSummary
	if err == nil {
		last := time.Now()
		for _, r := range d.Regions {
			total := 0.0
			for _, v := range r.Cases {
				total += v
			}
			areas = append(areas, AreaSummary{Name: r.Name, First: r.Start.Format(time.DateOnly),
				Last: r.End().Format(time.DateOnly), Days: len(r.Cases), Total: total})
			last = s.maybeYield(last)
		}
	}
	ready := false
	s.publish(func() {
		s.Reading = false
		if err != nil {
			s.DataProblem = DataProblem(err)
			return
		}
		s.Data, s.DataNotices, s.Areas, s.AreaPage = d, d.Notices, areas, 0
		s.Area = d.Regions[0].Name
		s.PreviewPage = 0
		s.refreshArea()
		ready = s.Welcome != nil
	})
	if ready {
		s.checkStudy()
	}
}

// readSized reads all of r into one buffer of size bytes (growing only if
// r holds more), so a large file is copied into Go's memory once, without
// the doubling of io.ReadAll; the last read reaches EOF, which lets a
// browser-backed reader drop its copy at once.
func readSized(r io.Reader, size int) ([]byte, error) {
	data := make([]byte, max(size, 0))
	n, err := io.ReadFull(r, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return data[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return append(data, rest...), nil
}

// yieldingReader calls yield about every 30 ms of reading (parsing happens
// between reads), so that parsing a large file lets the browser paint.
type yieldingReader struct {
	r     io.Reader
	yield func()
	last  time.Time
}

func (y *yieldingReader) Read(p []byte) (int, error) {
	if y.yield != nil {
		if y.last.IsZero() {
			y.last = time.Now()
		} else if time.Since(y.last) > 30*time.Millisecond {
			y.yield()
			y.last = time.Now()
		}
		if len(p) > 64<<10 {
			p = p[:64<<10] // small reads: a chance to yield every 64 KiB
		}
	}
	return y.r.Read(p)
}

// maybeYield calls Yield when 30 ms have passed since last.
func (s *JoinState) maybeYield(last time.Time) time.Time {
	if s.Yield == nil || time.Since(last) < 30*time.Millisecond {
		return last
	}
	s.Yield()
	return time.Now()
}

// FileError reports a file that could not be read at all.
func (s *JoinState) FileError(name string, err error) {
	s.lock()
	defer s.unlock()
	s.Reading = false
	s.FileName = name
	s.Data, s.DataNotices = nil, nil
	s.DataProblem = &Problem{Title: "The file could not be opened", Detail: err.Error(),
		Fix: "Choose the file again. If it is on a network drive, copy it to this computer first."}
}

// checkStudy checks that the chosen file gives training windows for the
// study (region by region, yielding), counts them, and estimates how long
// one round of local training takes here. It takes the lock itself.
func (s *JoinState) checkStudy() {
	s.lock()
	d, w := s.Data, s.Welcome
	maxWindows := s.maxWindows()
	if d == nil || w == nil {
		s.unlock()
		return
	}
	s.Checking = true
	s.unlock()

	var est time.Duration
	set, err := s.prepareTraining(w.Study, d, maxWindows)
	if err == nil && set.Total() == 0 {
		err = series.ErrTooShort
	}
	if err == nil {
		est, err = session.EstimateRound(w.Study, set)
	}
	s.publish(func() {
		s.Checking = false
		if s.Data != d {
			return // another file was chosen meanwhile
		}
		if err != nil {
			p := DataProblem(err)
			var ce *series.CoverageError
			if st := w.Study; !errors.As(err, &ce) && (st.From != "" || st.To != "") {
				p.Fix = studyDaysFix(st)
			}
			s.DataProblem = p
			s.Data = nil
			return
		}
		s.prepared = set
		s.Windows, s.PerRound, s.RoundEstimate = set.Total(), set.PerRound(), est
	})
}

// maxWindows is the cap on windows per round in force.
func (s *JoinState) maxWindows() int {
	if s.MaxWindows > 0 {
		return s.MaxWindows
	}
	return session.DefaultMaxWindows
}

// scheduler is implemented by sessions that know the study's public round
// timetable (*session.Session).
type scheduler interface {
	NextRound(now time.Time) (opens, trainBy time.Time, ok bool)
}

// NextRound returns when the next round opens after now and by when its
// update must arrive, from the public schedule; ok is false when the
// session does not know it (yet).
func (s *JoinState) NextRound(now time.Time) (opens, trainBy time.Time, ok bool) {
	if sc, is := s.session.(scheduler); is {
		return sc.NextRound(now)
	}
	return time.Time{}, time.Time{}, false
}

// RoundTime is how long the coordinator takes updates in each round: the
// round length less the slack it keeps to add the noise and release the
// model (0 when the study does not say).
func (s *JoinState) RoundTime() time.Duration {
	if s.Welcome == nil {
		return 0
	}
	st := s.Welcome.Study
	return time.Duration(st.RoundLengthMillis-st.RoundSlackMillis) * time.Millisecond
}

// WouldMiss reports whether the estimated round time leaves less than a
// fifth of the coordinator's round time to spare: the update would likely
// arrive too late to count.
func (s *JoinState) WouldMiss() bool {
	rt := s.RoundTime()
	return rt > 0 && s.RoundEstimate > rt*4/5
}

// SetMaxWindows sets the cap on windows per round from the page's field
// and checks the file again (call from a goroutine: it yields).
func (s *JoinState) SetMaxWindows(text string) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(text, ",", "")))
	s.lock()
	if err != nil || n < 1 {
		s.LimitProblem = fmt.Sprintf("%q is not a number of examples: type a whole number such as 2000.", text)
		s.unlock()
		return
	}
	s.LimitProblem = ""
	s.MaxWindows = n
	s.unlock()
	s.checkStudy()
}

// SetMaxEpsilon sets the LHA's own privacy limit from the page's field.
// Call with the lock held (an event handler).
func (s *JoinState) SetMaxEpsilon(text string) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(text, ",", ".")), 64)
	budget := 0.0
	if s.Welcome != nil {
		budget = s.Welcome.Study.Epsilon
	}
	switch {
	case err != nil || !(v > 0) || math.IsInf(v, 0):
		s.LimitProblem = fmt.Sprintf("%q is not a privacy limit: type a number above 0, such as 1 or 0.5.", text)
	case budget > 0 && v > budget:
		s.LimitProblem = fmt.Sprintf("Your limit cannot be above the study's budget (ε = %s): the study stops there anyway. The limit stays at ε = %s.",
			FormatEpsilon(budget), FormatEpsilon(budget))
		s.MaxEpsilon = budget
	default:
		s.LimitProblem = ""
		s.MaxEpsilon = v
	}
}

// EpsilonLimit is the LHA's own ε limit in force: its choice, or the
// study's budget.
func (s *JoinState) EpsilonLimit() float64 {
	if s.MaxEpsilon > 0 {
		return s.MaxEpsilon
	}
	if s.Welcome != nil {
		return s.Welcome.Study.Epsilon
	}
	return 0
}

// ShownNotices are the file's notices as the page shows them: warnings
// first; once the study is known, warnings about missing or unreported
// days only when
// they fall inside the study's from/to (elsewhere they do no harm).
func (s *JoinState) ShownNotices() []series.Notice {
	if s.Data == nil || len(s.DataNotices) == 0 {
		return nil
	}
	var from, to time.Time
	known := false
	if s.Welcome != nil {
		if f, t, err := session.StudyPeriod(s.Welcome.Study); err == nil {
			from, to, known = f, t, true
		}
	}
	var warn, info []series.Notice
	for _, n := range s.DataNotices {
		switch {
		case n.Level != series.Warning:
			info = append(info, n)
		case n.AboutDays() && known && !n.From.IsZero():
			if (to.IsZero() || !n.From.After(to)) && (from.IsZero() || !n.To.Before(from)) {
				warn = append(warn, n.ForLHA())
			}
		default:
			warn = append(warn, n.ForLHA())
		}
	}
	return append(warn, info...)
}

// DataWarnings counts the warnings among ShownNotices.
func (s *JoinState) DataWarnings() int {
	n := 0
	for _, x := range s.ShownNotices() {
		if x.Level == series.Warning {
			n++
		}
	}
	return n
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
	s.PreviewPage = 0
	s.refreshArea()
}

// AreaPageRows is the current page of the areas table.
func (s *JoinState) AreaPageRows() []AreaSummary {
	from := min(s.AreaPage*AreasPerPage, len(s.Areas))
	return s.Areas[from:min(from+AreasPerPage, len(s.Areas))]
}

// AreaPages is the number of pages of the areas table.
func (s *JoinState) AreaPages() int { return (len(s.Areas) + AreasPerPage - 1) / AreasPerPage }

// PreviewPages is the number of pages of the selected area's days.
func (s *JoinState) PreviewPages() int { return (s.PreviewDays + PreviewPerPage - 1) / PreviewPerPage }

// TurnAreaPage moves the areas table by delta pages (clamped).
func (s *JoinState) TurnAreaPage(delta int) {
	s.AreaPage = max(0, min(s.AreaPages()-1, s.AreaPage+delta))
}

// TurnPreviewPage moves the day preview by delta pages (+1: older days).
func (s *JoinState) TurnPreviewPage(delta int) {
	s.PreviewPage = max(0, min(s.PreviewPages()-1, s.PreviewPage+delta))
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
	s.PreviewDays = len(r.Cases)
	newest := len(r.Cases) - 1 - s.PreviewPage*PreviewPerPage
	from := max(0, newest-PreviewPerPage+1)
	for i := newest; i >= from; i-- {
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
	return s.Phase == PhaseReady && s.Data != nil && s.prepared != nil && !s.Checking && s.session != nil &&
		s.Welcome.State != protocol.StateFinished && (!s.Welcome.Study.InsecureSeed || s.InsecureAck)
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
	s.JoinedAt = time.Now()
	sess, d := s.session, s.Data
	if l, ok := sess.(interface {
		SetMaxEpsilon(float64)
		SetMaxWindows(int)
	}); ok {
		l.SetMaxEpsilon(s.EpsilonLimit())
		l.SetMaxWindows(s.maxWindows())
	}
	s.setPublic(sess)
	s.watchExampleBudget(sess)
	go func() {
		err := sess.Run(ctx, d, s.Observer())
		model := sess.Model()
		s.lock()
		if err != nil {
			s.Phase = PhaseFailed
			s.RunProblem = RunProblem(err)
			s.unlock()
			return
		}
		s.Phase = PhaseFinished
		s.Status = StatusFinished
		s.Forecasting = true
		s.unlock()
		s.forecast(model)
		s.WatchForNext(ctx)
	}()
}

// WatchForNext polls the public status every few seconds, once the study
// has ended, until a study that has not ended is served at the same link;
// then NextStudy is set. It returns at once without Fetch, and runs at
// most once per page.
func (s *JoinState) WatchForNext(ctx context.Context) {
	s.lock()
	if s.Fetch == nil || s.watching {
		s.unlock()
		return
	}
	s.watching = true
	s.unlock()
	u, err := url.Parse(s.Link)
	if err != nil {
		return
	}
	status := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/api/status"}).String()
	every := s.watchEvery
	if every == 0 {
		every = 3 * time.Second
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		code, b, err := s.Fetch(ctx, status, "")
		var st protocol.Status
		if err != nil || code != 200 || json.Unmarshal(b, &st) != nil {
			continue
		}
		if st.State != protocol.StateFinished {
			s.lock()
			s.NextStudy = true
			s.unlock()
			return
		}
	}
}

// RunProblem explains why training stopped.
func RunProblem(err error) *Problem {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &Problem{Title: "The coordinator stopped this session", Detail: TechLine(pe),
			Fix: "Reload the page to join again. If it persists, tell your study coordinator."}
	}
	if errors.Is(err, context.Canceled) {
		return &Problem{Title: "You stopped taking part", Fix: "Reload the page to join again."}
	}
	return &Problem{Title: "Training stopped", Detail: TechLine(err),
		Fix: "Reload the page to join again; the study goes on without you meanwhile. If it persists, tell your study coordinator."}
}

// Observer returns the client callbacks that update this state.
func (s *JoinState) Observer() session.Observer {
	return session.Observer{
		State:    func(st session.State) { s.SetStatus(string(st)) },
		Progress: s.Progress,
		Sent:     func(o session.Outgoing) { s.RecordSent(o.Type, int64(o.Bytes), o.Round) },
		Result: func(r session.Result) {
			s.RoundDone(RoundReport{Round: r.Round, Epsilon: r.Epsilon, LocalEpsilon: r.LocalEpsilon, PublicEpsilon: r.PublicEpsilon, TookPart: r.Sampled})
			s.refreshExampleBudget()
		},
		Accepted: func(round int) { s.UpdateOutcome(round, OutcomeCounted, "") },
		Error: func(e *protocol.Error) {
			if e.Round > 0 {
				s.UpdateOutcome(e.Round, OutcomeRefused, RefusalWords(e))
			}
		},
		Skipped: s.Skipped,
	}
}

// UpdateOutcome records the coordinator's answer to the update sent for
// round.
func (s *JoinState) UpdateOutcome(round int, outcome, reason string) {
	s.lock()
	defer s.unlock()
	for i := len(s.Sent) - 1; i >= 0; i-- {
		if e := &s.Sent[i]; e.Type == "update" && e.Round == round {
			e.Outcome, e.Reason = outcome, reason
			return
		}
	}
}

// Skipped records a round sat out because of the LHA's own ε limit.
func (s *JoinState) Skipped(k session.Skip) {
	s.lock()
	s.Skips = append(s.Skips, k)
	s.Status = StatusWaiting
	s.unlock()
}

// RefusalWords says in plain words why the coordinator did not count an
// update.
func RefusalWords(e *protocol.Error) string {
	switch e.Code {
	case protocol.CodeStaleRound:
		return "it arrived after the round had closed (this computer took longer than the round allows), so the round went on without it"
	case protocol.CodeNotSampled:
		return "the coordinator had not picked this authority for that round"
	case protocol.CodeDuplicateUpdate:
		return "the coordinator already had changes from this authority for that round"
	case protocol.CodeBadUpdate, protocol.CodeTooLarge, protocol.CodeBadFrame:
		return "the coordinator could not accept the changes as sent (" + e.Message + "); tell your study coordinator"
	case protocol.CodeFinished:
		return "the study had already ended"
	}
	return e.Message
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
// It asks for a render at most every 100 ms (and at the first and last
// step): rebuilding the page after every step would cost as much as the
// training itself.
func (s *JoinState) Progress(round, step, steps int) {
	now := time.Now()
	update := func() {
		s.TrainRound, s.Step, s.Steps = round, step, steps
		s.Status = StatusTraining
		if step == 0 {
			s.trainStart = now
		} else if step == steps && !s.trainStart.IsZero() {
			s.TrainTime = now.Sub(s.trainStart)
		}
	}
	if step == 0 || step == steps || now.Sub(s.lastRender) >= 100*time.Millisecond {
		s.lastRender = now
		s.publish(update)
		return
	}
	s.lock()
	update()
	if s.Env != nil {
		s.Env.UnlockOnly()
	}
	if time.Since(s.lastYield) > 30*time.Millisecond {
		s.yieldNow()
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
	case "ready":
		e.What = "that you pressed Join with a checked file (nothing about the file: no rows, dates or areas)"
	case "update":
		e.What = fmt.Sprintf("round %d: the model changes computed here, clipped", round)
	case "report":
		e.What = fmt.Sprintf("round %d: one report split between the two servers: the coordinator's part (random-looking numbers) and a sealed key only the helper can open; it holds your model changes if this computer picked itself, zeros otherwise, and says nothing about which", round)
	case "dummy":
		e.What = fmt.Sprintf("round %d: a stand-in of the same size holding only zeros (sent when this computer was not picked, so that nobody watching the network can tell)", round)
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
	s.Epsilon, s.LocalEpsilon, s.PublicEpsilon = r.Epsilon, r.LocalEpsilon, r.PublicEpsilon
	s.EpsilonChecked = true
	s.EpsilonMatch = session.EpsilonMatches(r.Epsilon, r.LocalEpsilon)
	s.Rounds = append(s.Rounds, r)
	if s.Status != StatusFinished {
		s.Status = StatusWaiting
	}
}

// forecast evaluates the final model on the LHA's data (session.Evaluate:
// each area's forecast, the hub file, the local test metrics of the model
// and of the no-change forecast), yielding as it goes, draws the forecast
// charts and publishes it all under the lock. Data and Welcome do not
// change once training has started.
func (s *JoinState) forecast(params []float64) {
	s.lock()
	d, w, issued := s.Data, s.Welcome, s.loadIssued()
	s.unlock()
	if d == nil || w == nil || len(params) == 0 {
		s.publish(func() { s.Forecasting = false })
		return
	}
	ev, err := s.evaluate(w.Study, d, params, issued)
	var forecasts []Forecast
	sm := s.smoothing()
	last := time.Now()
	for _, g := range ev.Guarded {
		f := g.Forecast
		forecasts = append(forecasts, Forecast{Area: f.Area, InputEnd: f.InputEnd, Target: f.Target, Value: f.Point,
			Quantiles: f.Quantiles, Chart: forecastChart(d.Region(f.Area), sm, f.InputEnd, f.Target, f.Quantiles), Guard: g.Headline})
		last = s.maybeYield(last)
	}
	s.publish(func() {
		s.Forecasts, s.Recent, s.Hub, s.ForecastPage = forecasts, ev.Recent, ev.Hub, 0
		s.Forecasting = false
		s.saveIssued(issued, ev.Guarded)
		s.HubURL = objectURL(s.HubURL, ev.Hub, "text/csv;charset=utf-8")
		s.Metrics, s.Baseline, s.MetricsNote = ev.Model, ev.Baseline, evaluationNote(err)
	})
}

// evaluationNote says why part of the evaluation is missing ("" when
// nothing is).
func evaluationNote(err error) string {
	var le *session.LayoutError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &le):
		return fmt.Sprintf("The final model has %d numbers, the study's layout %d: no forecast.", le.Have, le.Want)
	case errors.Is(err, session.ErrUnknownModel):
		return "The study's model type is unknown to this page: no forecast."
	case errors.Is(err, session.ErrNoTestDays):
		return "Your file has no test days: all its windows were used for training."
	}
	return TechLine(err)
}

// ForecastsPerPage is the number of areas whose forecast chart is shown at
// once.
const ForecastsPerPage = 10

// ForecastPageRows is the current page of forecasts.
func (s *JoinState) ForecastPageRows() []Forecast {
	from := min(s.ForecastPage*ForecastsPerPage, len(s.Forecasts))
	return s.Forecasts[from:min(from+ForecastsPerPage, len(s.Forecasts))]
}

// ForecastPages is the number of pages of forecasts.
func (s *JoinState) ForecastPages() int {
	return (len(s.Forecasts) + ForecastsPerPage - 1) / ForecastsPerPage
}

// TurnForecastPage moves the forecasts by delta pages (clamped).
func (s *JoinState) TurnForecastPage(delta int) {
	s.ForecastPage = max(0, min(s.ForecastPages()-1, s.ForecastPage+delta))
}

// forecastChart plots the last six weeks of an area with its forecast:
// the median as a dashed line, the 50 % and 95 % ranges as bands.
func forecastChart(r *series.Region, sm series.Smoothing, inputEnd, target time.Time, q forecast.Quantiles) *Chart {
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
	at := avg[last]
	fc := []Point{{Day(inputEnd), at}, {Day(target), q.Median()}}
	band := func(coverage float64) []BandPoint {
		lo, hi, _ := q.Interval(coverage)
		return []BandPoint{{Day(inputEnd), at, at}, {Day(target), lo, hi}}
	}
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
		Bands: []Band{
			{Name: "95 % range", Class: "band95", Points: band(0.95)},
			{Name: "50 % range", Class: "band50", Points: band(0.5)},
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
