package ui

// The LHA page's state (JoinState) and its connection to the coordinator.
// The page's other concerns have files of their own: reading the file
// (load.go), checking it against the study (check.go), its areas and days
// (areas.go), taking part (run.go, stage.go), what left this computer
// (sent.go), the forecast (forecast.go) and the words of problems
// (words.go).

import (
	"context"
	"errors"
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
		return s, joinedWelcome(s), nil
	}
}

// joined is what joinedWelcome reads of a joined session.
type joined interface {
	Study() protocol.Study
	LHA() string
	Log() []protocol.Event
	WelcomeState() string
	Finished() *protocol.Finished
}

// joinedWelcome is the welcome the page shows for a joined session: its
// study, LHA and round log, and the coordinator's own state, so that a
// study stopped early (by its budget or its operator, before all its
// rounds) reads as ended, not running.
func joinedWelcome(s joined) *protocol.Welcome {
	w := &protocol.Welcome{Study: s.Study(), LHA: s.LHA(), Log: s.Log(), State: s.WelcomeState()}
	switch {
	case s.Finished() != nil:
		w.State = protocol.StateFinished
	case w.State == "" && len(w.Log) > 0:
		w.State = protocol.StateRunning
	case w.State == "":
		w.State = protocol.StateWaiting
	}
	return w
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
	// ForecastProgress is how far the forecast has got while Forecasting
	// (forecast_progress.go); zero before its first report.
	ForecastProgress session.Progress
	progressEvery    time.Duration // 0: 100 ms (forecast_progress.go)
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
	// Unusable says why the study cannot use the chosen file, which was
	// read (too few days, days the study needs missing, …) and what to
	// do. The LHA can still join, present only: it is counted as ready,
	// trains nothing, and answers each round with a stand-in of zeros.
	Unusable *Problem
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
	Status      string // StatusWaiting …
	Round       int    // rounds released so far
	TrainRound  int    // round being trained (when sampled)
	Step, Steps int
	// Late are the rounds whose local training had not finished when the
	// answer had to leave: a stand-in of zeros left on time instead.
	Late                  []int
	Epsilon, LocalEpsilon float64
	PublicEpsilon         float64 // with a helper: ε against the public (argued)
	EpsilonChecked        bool    // at least one round compared
	EpsilonMatch          bool
	Rounds                []RoundReport
	TrainTime             time.Duration // wall time of the last local training
	// JoinedAt is when Join was pressed: the page then says ready (it
	// counts for the coordinator from then on; see Missed).
	JoinedAt time.Time
	// PresentOnly: the LHA joined with a file the study cannot use
	// (Unusable says why): it trains nothing and sends only stand-ins.
	PresentOnly bool
	RunProblem  *Problem
	Sent        []SentEntry // the latest SentKept messages sent (sent.go), oldest first
	SentEarlier SentSummary // messages sent before Sent[0], kept as totals only
	// SentLost: the record of earlier messages kept in this browser could
	// not be read (sent_store.go); the list starts after them.
	SentLost bool
	SentAll  bool // "What left this computer" lists every message kept, not only the latest SentShown

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
	renderCost time.Duration // what the last render during training took (Progress)
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
	// Before this page was reloaded, messages may have left: the record
	// kept in this browser comes first.
	s.restoreSent()
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

// Close stops the session.
func (s *JoinState) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.session != nil {
		s.session.Close()
	}
}
