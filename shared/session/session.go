package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// Errors of a session.
var (
	// ErrModelChanged: a model for a round differs from the one released
	// before (a re-noised or forked release), or a round_start's weights
	// are not the last released model.
	ErrModelChanged = errors.New("session: coordinator released a different model for the same round")
	// ErrBudgetMismatch: the coordinator's ε is below the one recomputed
	// here, or a round's q or c differ from the public study parameters.
	ErrBudgetMismatch = errors.New("session: coordinator's privacy accounting does not match")
	// ErrBadStudy: the public study parameters are inconsistent.
	ErrBadStudy = errors.New("session: inconsistent study parameters")
	// ErrBadLink: a join link without a token or with an unknown scheme.
	ErrBadLink = errors.New("session: bad join link")
	// ErrNoDialer: Join was called without Options.Dial.
	ErrNoDialer = errors.New("session: no dialer (Options.Dial) to reach the coordinator")
	// ErrNoData: the LHA's data gives no training window for this study
	// (Run then takes part present only: see Unusable).
	ErrNoData = errors.New("session: no training windows in the data for this study")
)

// State is where the session is, for the UI.
type State string

// States reported to Observer.State.
const (
	StateWaiting      State = "waiting"      // joined, not picked in the current round
	StateSampled      State = "sampled"      // picked: round_start with picked set received
	StateTraining     State = "training"     // local training running
	StateSent         State = "sent"         // clipped update sent (a dummy leaves without a state change)
	StateReconnecting State = "reconnecting" // connection lost, redialling
	StateFinished     State = "finished"     // the study has ended
)

// Outgoing describes one message that left this computer.
type Outgoing struct {
	Type  string // "hello" (the join token, in the websocket handshake), "ready", "update", "dummy" or "report" (with a helper)
	Round int    // 0 for hello and ready
	Bytes int    // frame size (for hello: the handshake header's value)
}

// Result is one released round as checked here.
type Result struct {
	Round int
	// Sampled is true when this LHA was sampled and sent an update.
	Sampled bool
	// Epsilon is the coordinator's ε after the round; LocalEpsilon the one
	// recomputed here from the public parameters and the round log.
	Epsilon, LocalEpsilon float64
	// PublicEpsilon, in a study with a helper, is ε against the public
	// (√2 times the noise, argued; PublicEpsilon); LocalEpsilon is then
	// each server's. 0 without a helper.
	PublicEpsilon float64
	ModelSHA256   string
	// Resent marks a re-sent result of a round already received (after a
	// reconnect or a coordinator restart); its hash was checked.
	Resent bool
}

// Observer receives the session's events; nil fields are skipped. The
// callbacks run on Run's goroutine and must not block for long.
type Observer struct {
	State func(State)
	// Progress reports local training: step 0 when it starts, then after
	// each of the E steps (step = 1…steps). In the browser, this is where
	// the page yields so it keeps painting during training.
	Progress func(round, step, steps int)
	Sent     func(Outgoing)
	Result   func(Result)
	// Error reports non-fatal coordinator errors (e.g. stale_round: an
	// update that arrived after its round closed and was not counted).
	Error func(*protocol.Error)
	// Accepted reports that the coordinator counted this LHA's update for
	// a round.
	Accepted func(round int)
	// Skipped reports a round this LHA was sampled for but sent nothing in,
	// and why (its own ε limit).
	Skipped func(Skip)
}

// Skip is a round sat out although sampled.
type Skip struct {
	Round int
	// Epsilon is ε after the round, recomputed here; Limit the LHA's own
	// limit that it would have passed.
	Epsilon, Limit float64
	// Example is true when the limit was the LHA's own example-level
	// budget of local DP-SGD: Epsilon is then what it has spent, Limit
	// that budget.
	Example bool
}

// Options configure Join. The zero value is ready to use.
type Options struct {
	// MaxEpsilon is this LHA's own limit: it does not train in a round
	// that would take the recomputed ε above it. 0 means the study's
	// budget at the first welcome (a later top-up does not raise it).
	MaxEpsilon float64
	// ReconnectMax caps the wait between redials after a lost connection
	// (exponential backoff from 100 ms). 0 means 5 s; negative disables
	// reconnecting (Run returns the connection error).
	ReconnectMax time.Duration
	// MaxWindows caps the training windows used per round: with more, each
	// round trains on a fresh random sample of this many (see
	// TrainingSet). 0 means no cap.
	MaxWindows int
	// Yield, when set, is called about every 30 ms while the training
	// windows are prepared, so a browser can paint.
	Yield func()
	// Dial opens the connection to the coordinator (and each redial after
	// a lost one). Required: the browser passes its WebSocket dialer
	// (package wasm), native clients coordinator/lhaconn's, tests a Pipe.
	Dial Dialer
	// Accounts, if set, keeps the local DP-SGD accountant across sessions
	// of the same study (the browser's localStorage; see AccountStore).
	Accounts AccountStore
	// Refresh, if set, is called at the first round of each campaign after
	// the first in a continuing study: the data it returns (the LHA's file
	// as it is now) replace the training windows. On an error the windows
	// stay as they were (Refresh reports it itself).
	Refresh func(campaign int) (*series.Dataset, error)
	// Public are the study's public inputs (forecast.ReadPublicFile of
	// the declared totals file, its hash checked): a weekly study
	// (protocol.Study.Weekly) trains with them. Also SetPublic.
	Public *forecast.PublicInputs
}

// Session is one LHA's membership in a study.
type Session struct {
	wsURL, token string
	opt          Options
	running      bool // Run has started: the LHA is ready, and says so on every connection

	ws     Conn
	limit  int64 // the read limit: MaxText until the welcome, then a frame of the model
	study  protocol.Study
	agreed protocol.Study // the study of the first welcome (before later top-ups, topup.go)
	lha    string
	state  string
	mlp    *nn.MLP

	mu         sync.Mutex
	global     []float64
	events     []protocol.Event
	acct       *privacy.RDP
	accountant privacy.Accountant // the study's accountant
	trains     fl.Strategy        // the study's strategy: how its LHAs train together
	sampled    map[int]bool       // rounds this LHA sent a real update in
	// answered are the rounds this LHA sent a frame in (update or dummy),
	// on any connection: each round is answered once.
	answered map[int]bool
	// unacked are the frames sent on this connection and not yet
	// acknowledged, oldest first; acked those acknowledged and awaiting
	// their round's release (see Run: how an update is counted).
	unacked, acked []sentFrame
	// training is closed when the last training started has ended (nil
	// before any): a round never trains while an earlier one still does.
	training chan struct{}
	pending  []Outgoing // sent before Run had an observer
	finished *protocol.Finished
	schedule *protocol.Schedule // the public round schedule, from the last welcome
	strategy strategyState      // MR-MTL personal model, local DP-SGD (strategy.go)
	cyc      cyclicState        // a cyclic study: this LHA's turns and own hand-offs (cyclic.go)
}

// ParseJoinLink splits a join link http(s)://HOST/join#TOKEN into the
// websocket URL ws(s)://HOST/api/ws and the token.
func ParseJoinLink(link string) (wsURL, token string, err error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrBadLink, err)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return "", "", fmt.Errorf("%w: scheme %q (want http, https, ws or wss)", ErrBadLink, u.Scheme)
	}
	token = u.Fragment
	u.Fragment, u.RawFragment, u.RawQuery = "", "", ""
	if !strings.HasSuffix(u.Path, "/api/ws") {
		u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/join") + "/api/ws"
	}
	return u.String(), token, nil
}

// Join connects to the coordinator and joins with token. link is a join
// link (its fragment is the token when token is "") or a websocket URL.
func Join(ctx context.Context, link, token string, opt *Options) (*Session, error) {
	wsURL, frag, err := ParseJoinLink(link)
	if err != nil {
		return nil, err
	}
	if token == "" {
		token = frag
	}
	if token == "" {
		return nil, fmt.Errorf("%w: no token (give it as the link's #fragment)", ErrBadLink)
	}
	s := &Session{wsURL: wsURL, token: token, sampled: map[int]bool{}, answered: map[int]bool{}}
	if opt != nil {
		s.opt = *opt
	}
	if s.opt.Dial == nil {
		return nil, ErrNoDialer
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// connect dials with the join token in the handshake (see
// protocol.Subprotocols) and processes the welcome, the coordinator's
// first frame.
func (s *Session) connect(ctx context.Context) error {
	protos := protocol.Subprotocols(s.token)
	ws, err := s.opt.Dial(ctx, s.wsURL, protos)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			return pe
		}
		return fmt.Errorf("session: dial %s: %w", s.wsURL, err)
	}
	s.mu.Lock()
	s.pending = append(s.pending, Outgoing{Type: "hello", Bytes: len(strings.Join(protos, ", "))})
	s.mu.Unlock()
	m, err := read(ctx, ws, protocol.MaxText)
	if err != nil {
		ws.Close(CloseAbort, "")
		return err
	}
	switch m := m.(type) {
	case *protocol.Error:
		ws.Close(CloseAbort, "")
		return m
	case *protocol.Welcome:
		if err := s.welcome(m); err != nil {
			ws.Close(ClosePolicyViolation, "bad welcome")
			return err
		}
	default:
		ws.Close(CloseAbort, "")
		return fmt.Errorf("%w: expected welcome, got %s", protocol.ErrMalformed, m.Type())
	}
	s.limit = max(protocol.MaxText, protocol.FrameSize(s.study.Params))
	if s.running {
		// A redial during Run: a new connection starts not ready.
		if err := s.writeReady(ctx, ws); err != nil {
			ws.Close(CloseAbort, "")
			return err
		}
	}
	s.ws = ws
	return nil
}

func read(ctx context.Context, ws Conn, limit int64) (protocol.Message, error) {
	k, b, err := ws.Read(ctx, limit)
	if err != nil {
		return nil, err
	}
	return protocol.Decode(k, b)
}

// welcome checks the study parameters (the first time: later welcomes must
// repeat them) and merges the round log.
func (s *Session) welcome(w *protocol.Welcome) error {
	st := w.Study
	if s.mlp == nil {
		if st.Protocol != protocol.Version {
			return fmt.Errorf("%w: coordinator speaks protocol %d, this client %d", protocol.ErrVersion, st.Protocol, protocol.Version)
		}
		if err := st.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		if out := st.NetOutputs(); out != 1 && (st.Weekly == nil || st.Weekly.Outputs() != out) {
			// Only a weekly design's quantile head has more than one
			// output; this client trains nothing else with several.
			return fmt.Errorf("%w: a network of %d outputs that is not a weekly design's quantile head", ErrBadStudy, out)
		}
		mlp := nn.NewMLP(st.Layers...)
		kind, err := privacy.ParseAccountantKind(string(st.Accountant))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		if err := checkPrivacy(st, kind); err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		if err := checkFirstTopUps(st); err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		client, err := st.StudyStrategy.NewClient(kind)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		trains, err := fl.LookupStrategy(fl.StrategyName(st.Strategy)) // checked by checkPrivacy
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadStudy, err)
		}
		if trains.Sequential() {
			i, err := checkCyclic(st, w)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrBadStudy, err)
			}
			s.cyc = cyclicState{index: i}
		}
		if st.Helper != nil {
			i, err := checkHelper(st, w)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrBadStudy, err)
			}
			s.cyc = cyclicState{index: i} // the LHA's number, in its reports' IDs
		}
		s.study, s.agreed, s.mlp, s.lha = st, st, mlp, w.LHA
		s.acct = privacy.NewRDP(nil)
		s.accountant, _ = privacy.LookupAccountant(kind) // parsed above
		s.trains = trains
		s.setClient(client)
		s.accountJoinedLate(len(w.Log), w.State)
		s.rememberAccount()
	} else if (s.isCyclic() && s.study.ID() != st.ID()) || ((s.isCyclic() || st.Helper != nil) && (w.Index == nil || *w.Index != s.cyc.index)) {
		return fmt.Errorf("%w: the study parameters changed on reconnect", ErrBadStudy)
	} else if err := s.acceptStudy(st); err != nil {
		return err
	}
	s.mu.Lock()
	s.state = w.State
	s.schedule = w.Schedule
	s.mu.Unlock()
	for i, ev := range w.Log {
		// PLD: the replayed log's ε is checked at its last round only
		// (one PLD computation instead of one per round: slow in wasm);
		// ε grows with the rounds, so that is the claim that bounds the
		// others.
		if _, err := s.event(ev, s.accountant.Kind() == privacy.AccountantRDP || i == len(w.Log)-1); err != nil {
			return err
		}
	}
	return nil
}

// event merges one released round's event into the log: a known round
// must carry the same hash; a new one must follow the last and its ε is
// checked against the study's accountant here (if check). It reports
// whether it was known.
func (s *Session) event(ev protocol.Event, check bool) (known bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Round >= 1 && ev.Round <= len(s.events) {
		if old := s.events[ev.Round-1]; old.ModelSHA256 != ev.ModelSHA256 || old.Epsilon != ev.Epsilon {
			return true, fmt.Errorf("%w: round %d was released with model %s, now %s", ErrModelChanged, ev.Round, old.ModelSHA256, ev.ModelSHA256)
		}
		return true, nil
	}
	if ev.Round != len(s.events)+1 {
		return false, fmt.Errorf("%w: round %d after round %d", ErrBudgetMismatch, ev.Round, len(s.events))
	}
	st := s.study
	if s.isCyclic() {
		return false, s.cyclicEvent(ev, check)
	}
	// c is the round's own multiplier under a noise schedule: a round
	// whose c departs from the announced schedule is refused.
	if c := privacy.MultiplierAt(st.NoiseMultiplier, st.NoiseMultipliers, ev.Round); ev.SampleRate != st.SampleRate || ev.NoiseMultiplier != c || ev.Delta != st.Delta {
		return false, fmt.Errorf("%w: round %d has q=%v, c=%v, δ=%v; the study announced q=%v, c=%v, δ=%v for it",
			ErrBudgetMismatch, ev.Round, ev.SampleRate, ev.NoiseMultiplier, ev.Delta, st.SampleRate, c, st.Delta)
	}
	if !st.ClientLevelDP() {
		// privacy "example": the round carries no client-level ε; the
		// LHA's guarantee is its own local accountant's.
		if ev.Epsilon != 0 || ev.Guarantee != string(fl.ExampleLevel) {
			return false, fmt.Errorf("%w: round %d of a study with privacy \"example\" reports ε=%v, guarantee %q", ErrBudgetMismatch, ev.Round, ev.Epsilon, ev.Guarantee)
		}
		s.events = append(s.events, ev)
		return false, nil
	}
	if ev.Guarantee != "" {
		return false, fmt.Errorf("%w: round %d reports guarantee %q in a study with privacy %q", ErrBudgetMismatch, ev.Round, ev.Guarantee, st.Privacy)
	}
	if ev.Accountant != "" && ev.Accountant != string(s.accountant.Kind()) {
		return false, fmt.Errorf("%w: round %d accounted with %q, the study announced %q", ErrBudgetMismatch, ev.Round, ev.Accountant, s.accountant.Kind())
	}
	s.acct.Compose(ev.SampleRate, ev.NoiseMultiplier, 1)
	if local := s.epsilonAfter(ev.Round, s.acct); check && ev.Epsilon < local-1e-9*math.Max(1, local) {
		return false, fmt.Errorf("%w: round %d: coordinator reports ε=%v, recomputed here %v (%s)", ErrBudgetMismatch, ev.Round, ev.Epsilon, local, s.accountant.Kind())
	}
	s.events = append(s.events, ev)
	return false, nil
}

// Study returns the public study parameters.
func (s *Session) Study() protocol.Study { return s.study }

// Schedule returns the study's public round schedule as of the last
// welcome (nil before joining, or from a coordinator without schedules).
func (s *Session) Schedule() *protocol.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.schedule
}

// NextRound returns when the next round opens after now and by when its
// update must arrive, computed from the public schedule (slots of
// round_length from its start; updates until round_length − slack after
// a round opens). ok is false before the schedule has started. After a
// coordinator restart or an overrun the coordinator resumes at another
// slot (in a continuing study possibly a free slot of the campaign's
// window, before the next campaign); the round_start's time left is
// authoritative.
func (s *Session) NextRound(now time.Time) (opens, trainBy time.Time, ok bool) {
	sch := s.Schedule()
	if sch == nil || sch.Start == nil || sch.RoundLength <= 0 {
		return time.Time{}, time.Time{}, false
	}
	l := time.Duration(sch.RoundLength)
	slack := time.Duration(sch.RoundSlack)
	// The coordinator's own word on the next round (a round_result, or
	// the status after a restart) comes first: a round delayed by a
	// restart no longer follows the planned timetable.
	if sch.Opens != nil && !sch.Opens.Before(now) {
		return *sch.Opens, sch.Opens.Add(l - slack), true
	}
	// In a continuing study the slots of a campaign follow its start
	// (protocol.Study.SlotStart); otherwise every L from the start.
	opens = s.study.SlotStart(*sch.Start, l, s.study.NextSlotAt(*sch.Start, l, now))
	return opens, opens.Add(l - slack), true
}

// LHA returns the name this token is enrolled under.
func (s *Session) LHA() string { return s.lha }

// Log returns the released rounds' events so far.
func (s *Session) Log() []protocol.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]protocol.Event(nil), s.events...)
}

// LocalEpsilon returns ε recomputed here over the released rounds.
func (s *Session) LocalEpsilon() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 || !s.study.ClientLevelDP() {
		return 0 // privacy "example": no client-level ε (see ExampleBudget)
	}
	if s.isCyclic() {
		return s.ownEpsilon(s.cyc.own) // this LHA's own hand-offs only
	}
	return s.epsilonAfter(len(s.events), s.acct)
}

// epsilonAfter returns ε at the study's δ after rounds rounds of its
// (q, c_t) by the study's accountant: for RDP from acc (the accumulated RDP
// of exactly those rounds), for PLD from the rounds themselves.
func (s *Session) epsilonAfter(rounds int, acc *privacy.RDP) float64 {
	eps, err := privacy.EpsilonAfter(s.accountant, s.studyEvents(rounds), acc, s.study.Delta)
	if err != nil {
		return math.Inf(1) // cannot account: treat as over every budget
	}
	return eps
}

// Model returns a copy of the model this LHA forecasts with: the latest
// global model received (nil before the first; after Run returned nil the
// final model), or under MR-MTL its personal model pulled towards it (see
// GlobalModel).
func (s *Session) Model() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forecastModel()
}

// WelcomeState is the study's state as the coordinator's last welcome
// gave it: protocol.StateWaiting, StateRunning or StateFinished ("" before
// joining). A study the coordinator stopped early (its budget, or the
// operator) is finished here before Run has read its finished message.
func (s *Session) WelcomeState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Finished returns the coordinator's finished message, nil while running.
func (s *Session) Finished() *protocol.Finished {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished
}

// Close closes the connection.
func (s *Session) Close() error {
	if s.ws == nil {
		return nil
	}
	return s.ws.Close(CloseNormal, "")
}

// SetMaxEpsilon sets this LHA's own ε limit (0: the study's budget) for
// the next Run; the page sets it after Join, once the LHA has chosen.
func (s *Session) SetMaxEpsilon(eps float64) { s.opt.MaxEpsilon = eps }

// SetMaxWindows sets the cap on training windows per round (0: none) for
// the next Run.
func (s *Session) SetMaxWindows(n int) { s.opt.MaxWindows = n }

// SetPublic sets the study's public inputs (Options.Public) for the next
// Run.
func (s *Session) SetPublic(p *forecast.PublicInputs) { s.opt.Public = p }

// prepare returns the training windows of data: the weekly design's
// (PrepareWeekly) in a weekly study, PrepareTraining's otherwise.
func (s *Session) prepare(data *series.Dataset) (*TrainingSet, error) {
	if IsWeekly(s.study) {
		return PrepareWeekly(s.study, data, s.opt.Public, s.opt.MaxWindows)
	}
	return PrepareTraining(s.study, data, s.opt.MaxWindows, s.opt.Yield)
}

// TrainingData returns the windows this LHA trains on for the study: all
// areas of data, each split by target date (the earliest TrainFraction),
// stacked, in the network's terms (the study's Features applied).
func TrainingData(st protocol.Study, data *series.Dataset) (x, y []float64, err error) {
	opt, err := WindowOptions(st)
	if err != nil {
		return nil, nil, err
	}
	areas, err := series.MakeWindows(data, opt)
	if err != nil {
		return nil, nil, err
	}
	train, _ := series.SplitAreas(areas, series.Temporal, st.TrainFraction, nil)
	features, err := model.Parse(st.Features)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadStudy, err)
	}
	x, y = features.Stack(train)
	return x, y, nil
}

// Run takes part in the study with data until it finishes (nil), ctx ends,
// or a check fails. See the package doc for what is checked.
// Training windows are prepared region by region (PrepareTraining with
// Options.MaxWindows), so a large file is never windowed whole.
//
// Data that give no usable window for the study (Unusable: too short,
// not covering the study's days, …) do not stop Run: the LHA takes part
// present only. It says ready like any other, trains nothing, and answers
// every round with a dummy of an update's size at the usual moment, so
// neither the coordinator's ready count nor the network tells anything
// about what the file holds.
func (s *Session) Run(ctx context.Context, data *series.Dataset, obs Observer) error {
	set, err := s.prepare(data)
	switch {
	case err != nil && !Unusable(err):
		return err
	case err != nil || set.Total() == 0:
		set = &TrainingSet{} // present only
	}
	return s.run(ctx, set, obs)
}

// TakeSent returns the messages sent so far that no Observer has been told
// of yet (the hello of Join, before Run has an observer), and forgets them,
// so that a user interface can list them at once; Run reports the rest.
func (s *Session) TakeSent() []Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// RunWindows is Run with the training windows already stacked (x: n×H
// row-major, y: n×outputs), for callers that prepared them. No windows at
// all (both empty) is taking part present only, as Run with unusable data.
func (s *Session) RunWindows(ctx context.Context, x, y []float64, obs Observer) error {
	in, out := s.study.History, s.study.NetOutputs()
	if len(s.study.Layers) > 0 {
		in = s.study.Layers[0]
	}
	if len(x)*out != len(y)*in {
		return ErrNoData
	}
	return s.run(ctx, &TrainingSet{x: x, y: y, total: len(y) / out, history: in, outputs: out}, obs)
}
