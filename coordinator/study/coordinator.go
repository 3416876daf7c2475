package study

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Transport delivers a Coordinator's messages to the LHAs' connections. Its
// methods must not block (a driver queues the frames, or sends them on a
// socket that buffers) and must not call back into the Coordinator.
type Transport interface {
	// Send queues frame b of kind k for LHA lha, if it is connected.
	Send(lha int, k protocol.Kind, b []byte)
	// Broadcast queues b for every connected LHA.
	Broadcast(k protocol.Kind, b []byte)
	// Drop closes LHA lha's connection once what was queued for it is
	// sent (after a fatal verdict).
	Drop(lha int, reason string)
	// Online reports whether LHA lha is connected.
	Online(lha int) bool
	// Connected returns the number of LHAs connected.
	Connected() int
}

// Hooks observe a Coordinator (metrics, tests). Every field may be nil.
// They are called with the Coordinator's locks held: they must be quick
// and must not call back into it.
type Hooks struct {
	// Accepted is called for each update counted in a round.
	Accepted func()
	// Rejected is called for each frame answered with an error code.
	Rejected func(code protocol.Code)
	// Committed is called after round's commit, which took took.
	Committed func(round int, took time.Duration)
	// Released is called after a round's release; took is the time from
	// its opening.
	Released func(round int, took time.Duration)
	// AfterCommit is called between a round's commit and the return of
	// the Tick that committed it (serve's crash-test pause).
	AfterCommit func(res *Result, received int)
}

// DriverOptions configure NewCoordinator.
type DriverOptions struct {
	// Transport is required.
	Transport Transport
	// Logger defaults to one that discards.
	Logger *slog.Logger
	// RestartGrace, if > 0, replaces the study file's restart grace
	// (File.ResumeWait).
	RestartGrace time.Duration
	// Clock is read after a round's aggregate and commit, to find a commit
	// that overran the slack and to time it; nil: the commit is taken to
	// be instantaneous (at the Tick's t). Every other time comes from the
	// t passed in.
	Clock func() time.Time
	Hooks Hooks
	// Helper gets the helper's aggregate share of a round in a study
	// with a helper (secure.go); required for such a study.
	Helper HelperFunc
}

// Next tells a driver when to call Tick again: at At (zero: no timed
// tick), or earlier whenever an LHA connects or leaves (while the study
// waits for its quorum). Calling Tick early or twice is harmless: it does
// only what is due at the t it is given.
type Next struct {
	At time.Time
	// Finished: the study has ended and its end was announced; no further
	// Tick is needed.
	Finished bool
}

// drive is where the round loop stands.
type drive int

const (
	driveInit   drive = iota // before the first Tick
	driveQuorum              // a new study waits for its start quorum
	driveResume              // a restarted study waits for its LHAs (or the grace)
	driveSlot                // waits for the start of slot j (release, then open)
	driveWindow              // round open, taking updates until closeAt
	driveCommit              // window closed, the helper's answer awaited (ErrHelperPending)
	driveDone                // finished and announced
	driveBroken              // a commit failed: the study stops
)

// Coordinator drives a study's rounds over an Engine on the fixed public
// schedule, without transport: a driver passes it the LHAs' binary frames
// (Frame), their arrivals (Join), and the time (Tick), and delivers what
// it sends through the Transport. See the package doc.
//
// Locks: one (emu) serialises the engine and the round loop (Tick), the
// other (fmu) guards the frames of the open window and the public
// snapshot and is only held briefly, so that no reply (an acknowledgement,
// a welcome, the status) waits for a round's aggregation.
type Coordinator struct {
	eng    *Engine
	tr     Transport
	log    *slog.Logger
	hooks  Hooks
	clock  func() time.Time
	helper HelperFunc

	length, slack, grace time.Duration
	quorum               int
	ack                  []byte

	emu       sync.Mutex
	phase     drive
	next      time.Time // when the next round opens (protocol.Study.OpeningAt)
	opened    time.Time // when the round in progress opened
	deadline  time.Time
	round     *Round
	closeAt   time.Time
	releaseAt time.Time // when the pending committed round is released
	pending   *release
	got       *collected // the closed window of the round being committed
	err       error

	fmu    sync.Mutex
	window *window
	late   map[int]int // LHA → binary frames received outside a window since the last release
	snap   snapshot
	// waiting: the LHAs whose current connection has not said ready yet
	// (see Join, Ready). Only an LHA online and not waiting counts towards
	// the quorum and gets round_start.
	waiting map[int]bool
}

// snapshot is everything a non-admin can see of the study, taken at
// schedule ticks only.
type snapshot struct {
	status   protocol.Status
	log      []protocol.Event
	lastSent []byte // encoded last released round_result
	finished []byte // encoded finished message once the study has ended
}

// window is the round that takes updates: its frames are buffered raw and
// decoded only when the window closes. It lives in memory only: an open
// round does not survive a restart.
type window struct {
	round   int
	sampled map[int]bool
	closeAt time.Time
	weights []float64      // the model the round trains from
	frames  map[int][]byte // the first binary frame of each LHA
	extra   map[int]int    // further frames per LHA (answered duplicate_update)
}

// verdict is the answer to one buffered frame, sent at the release.
type verdict struct {
	code  protocol.Code
	round int
	msg   string
}

// release is a committed round waiting for its release tick, with the
// answers to the frames of its window.
type release struct {
	res      *Result
	verdicts map[int][]verdict
	// rereleased: committed before a restart, released after it.
	rereleased bool
	// abandoned says why a helper study's round was abandoned (res nil).
	abandoned string
}

// Msg is one frame for a connection.
type Msg struct {
	Kind protocol.Kind
	B    []byte
}

// NewCoordinator returns the round driver of e; now is the time of the
// public snapshot it starts with (the committed rounds count as released:
// a restart releases the last one again to everyone who joins).
func NewCoordinator(e *Engine, opt DriverOptions, now time.Time) (*Coordinator, error) {
	if e == nil || opt.Transport == nil {
		return nil, errors.New("study: NewCoordinator needs an engine and a transport")
	}
	if e.Secure() && opt.Helper == nil {
		return nil, errors.New("study: a study with a helper needs DriverOptions.Helper")
	}
	if opt.RestartGrace < 0 {
		return nil, errors.New("study: RestartGrace must be ≥ 0")
	}
	f := e.File
	c := &Coordinator{eng: e, tr: opt.Transport, log: opt.Logger, hooks: opt.Hooks, clock: opt.Clock, helper: opt.Helper,
		length: time.Duration(f.RoundLength), slack: time.Duration(f.RoundSlack),
		grace: opt.RestartGrace, quorum: f.Quorum(), late: map[int]int{}, waiting: map[int]bool{}}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.grace == 0 {
		c.grace = f.ResumeWait()
	}
	if c.length <= 0 || c.slack <= 0 || c.slack >= c.length {
		return nil, fmt.Errorf("study: the study's round_length %v and round_slack %v do not make a schedule", c.length, c.slack)
	}
	_, ack, err := protocol.Encode(&protocol.Accepted{})
	if err != nil {
		return nil, err
	}
	c.ack = ack
	state := protocol.StateWaiting
	if e.Rounds() > 0 || !e.ScheduleStart().IsZero() {
		state = protocol.StateRunning
	}
	if e.Finished() != "" {
		state = protocol.StateFinished
	}
	snap := snapshot{log: e.Events()}
	if last := e.LastResult(); last != nil {
		_, b, err := protocol.Encode(&protocol.RoundResult{Event: last.Event, Weights: last.Weights})
		if err != nil {
			return nil, err
		}
		snap.lastSent = b
	}
	snap.status = c.statusOf(state, now, nil)
	if state == protocol.StateFinished {
		if snap.finished, err = c.encodeFinished(); err != nil {
			return nil, err
		}
	}
	c.recoverRelease(&snap, &state, now)
	c.snap = snap
	return c, nil
}

// Engine returns the engine (for reading under the driver's own care:
// the Coordinator's methods are the safe way while Tick may run).
func (c *Coordinator) Engine() *Engine { return c.eng }

// openingAt is when round opens if it cannot open before t
// (protocol.Study.OpeningAt on this study's schedule).
func (c *Coordinator) openingAt(round int, t time.Time) time.Time {
	return c.eng.Study.OpeningAt(c.eng.ScheduleStart(), c.length, round, t)
}

// Tick does what the schedule has due at time t, and says when to call
// it next. In order:
//
//   - a new study waits for its start quorum (Transport.Connected); the
//     moment it is reached is t₀, recorded in the store; slot j of the
//     schedule starts at t₀ + j·L;
//   - a restarted study waits until the quorum is online again or the
//     restart grace (counted from the first Tick) has passed, and resumes
//     at the first slot start after that;
//   - at a slot's start, the committed round waiting for it is released
//     (its verdicts to their senders, stale_round to frames that arrived
//     outside a window, the round_result to every connected LHA), then the
//     next round opens (Engine.Begin: budget gate, Poisson sample from all
//     N, round_start to each sampled LHA online), or the study's end is
//     announced;
//   - at the window's end (L − slack after the opening) the window closes
//     whatever has arrived; its frames are decoded and handed to the
//     engine in LHA order, and the round is aggregated, noised and
//     committed to the store (Engine.Complete). It is released at the
//     slot's end. A commit that overran the slack moves the release to the
//     next slot start after it (the slot between stays empty).
//
// So every time a non-admin can observe is a function of t₀, L and the
// slack. A Tick that commits a round returns right after the commit, so
// the commit and the release of a round never happen in one call. A failed
// commit stops the study: Tick returns the error (and the
// same error again).
func (c *Coordinator) Tick(t time.Time) (Next, error) {
	c.emu.Lock()
	defer c.emu.Unlock()
	for {
		switch c.phase {
		case driveInit:
			switch {
			case c.eng.Finished() != "" && c.pending == nil:
				c.finish(t)
				c.phase = driveDone
			case c.eng.ScheduleStart().IsZero() && c.eng.Rounds() == 0:
				c.phase = driveQuorum
			default:
				c.phase, c.deadline = driveResume, t.Add(c.grace)
				c.log.Info("resumed: waiting for the LHAs to reconnect before the next round", "quorum", c.quorum,
					"online", c.tr.Connected(), "ready", c.Counts().Ready, "grace", c.grace)
			}
		case driveQuorum:
			if c.Counts().Ready < c.quorum {
				return Next{}, nil
			}
			if err := c.eng.SetScheduleStart(t); err != nil {
				return Next{}, err
			}
			c.log.Info("start quorum reached: the round schedule starts", "t0", t.Format(time.RFC3339Nano), "round_length", c.length, "slack", c.slack)
			c.next, c.phase = t, driveSlot // round 1 opens at t₀
		case driveResume:
			online := c.Counts().Ready
			if online < c.quorum && t.Before(c.deadline) {
				return Next{At: c.deadline}, nil
			}
			why := "quorum online"
			if online < c.quorum {
				why = "restart grace over"
			}
			if c.eng.ScheduleStart().IsZero() { // a study recorded before schedules
				if err := c.eng.SetScheduleStart(t); err != nil {
					return Next{}, err
				}
			}
			c.log.Info("resuming rounds at the next slot", "reason", why, "online", online, "quorum", c.quorum)
			c.next, c.phase = c.openingAt(c.eng.Rounds()+1, t), driveSlot
			if c.pending != nil {
				c.resumeRelease(t)
			}
			c.announceNext()
		case driveSlot:
			if c.pending != nil {
				// The committed round is released at its slot's end (in a
				// continuing study the next round may open later: at the
				// next campaign's start).
				if t.Before(c.releaseAt) {
					return Next{At: c.releaseAt}, nil
				}
				if err := c.release(c.pending, c.releaseAt); err != nil {
					c.phase, c.err = driveBroken, err
					return Next{}, err
				}
				c.pending = nil
				if c.eng.CheckFinishedAt(c.releaseAt) {
					c.finish(c.releaseAt)
					c.phase = driveDone
					continue
				}
			}
			tick := c.next
			if t.Before(tick) {
				return Next{At: tick}, nil
			}
			r, err := c.eng.BeginAt(tick, c.live)
			if errors.Is(err, ErrFinished) {
				c.finish(tick)
				c.phase = driveDone
				continue
			}
			if err != nil {
				c.phase, c.err = driveBroken, err
				return Next{}, err
			}
			c.round, c.opened, c.closeAt = r, tick, tick.Add(c.length-c.slack)
			c.open(r, tick)
			c.phase = driveWindow
		case driveWindow:
			if t.Before(c.closeAt) {
				return Next{At: c.closeAt}, nil
			}
			c.got = c.collect(c.closeWindow(), t)
			c.phase = driveCommit
		case driveCommit:
			return c.commitTick(t)
		case driveDone:
			return Next{Finished: true}, nil
		case driveBroken:
			return Next{}, c.err
		}
	}
}

func (c *Coordinator) now(t time.Time) time.Time {
	if c.clock == nil {
		return t
	}
	return c.clock()
}

// Stop abandons the round that is open (its window closes; nothing of it
// was released, nothing is owed); a committed round waiting for its
// release stays committed (the next start releases it again). After Stop
// the Coordinator is not ticked again.
func (c *Coordinator) Stop() {
	c.closeWindow()
	c.emu.Lock()
	defer c.emu.Unlock()
	if r := c.eng.Current(); r != nil && r.Phase() != PhaseCommitted {
		if err := c.eng.Abandon(); err == nil {
			c.log.Info("round abandoned: nothing of it was released", "round", r.ID)
		}
	}
	c.round = nil
	if c.phase == driveWindow || c.phase == driveCommit {
		c.phase, c.got = driveSlot, nil
	}
}

// statusOf builds the public status (fmu held or during NewCoordinator).
// open is the window open at tick, if any.
func (c *Coordinator) statusOf(state string, tick time.Time, open *window) protocol.Status {
	st := c.eng.Study
	sch := &protocol.Schedule{RoundLength: protocol.Duration(c.length), RoundSlack: protocol.Duration(c.slack)}
	if t0 := c.eng.ScheduleStart(); !t0.IsZero() {
		sch.Start = &t0
	}
	if open != nil {
		opens, by, rel := tick, open.closeAt, open.closeAt.Add(c.slack)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = open.round, &opens, &by, &rel
	}
	var turn *protocol.Turn
	if open != nil {
		if r, pos, lha, ok := c.eng.Turn(open.round); ok { // a cyclic study: the public timetable
			turn = &protocol.Turn{Round: r, Position: pos + 1, LHA: c.eng.File.LHAs[lha].Name}
		}
	}
	asOf := tick
	g, _ := st.Guarantee() // checked by the study file's Validate
	rounds := st.Rounds
	if n := c.eng.Turns(); n > 0 {
		rounds = n // a cyclic study counts its turns (T·N)
	}
	return protocol.Status{Turn: turn,
		Round: c.eng.Rounds(), Rounds: rounds, Campaigns: st.Campaigns, EpsilonSpent: c.eng.EpsilonSpent(),
		SecureAggregation: c.eng.Secure(), EpsilonPublic: c.eng.PublicEpsilon(),
		EpsilonBudget: st.Epsilon, Delta: st.Delta, NoiseMultiplier: st.NoiseMultiplier,
		Guarantee: string(g), ExampleEpsilon: st.ExampleEpsilon, ExampleDelta: st.ExampleDelta,
		State: state, InsecureSeed: st.InsecureSeed, Name: st.Name, Clients: st.Clients,
		ExpectedClients: st.ExpectedClients, SampleRate: st.SampleRate, Protocol: protocol.Version,
		FinishReason: c.eng.Finished(), Schedule: sch, AsOf: &asOf, StudyID: st.ID(),
	}
}

// open starts round r's window at tick (emu held): the public snapshot
// moves to the tick, and every LHA online and ready gets the round's
// round_start, in enrolment order, the same frame for all but its picked
// digit (see roundStarts): who was sampled stays inside the encrypted
// channel.
func (c *Coordinator) open(r *Round, tick time.Time) {
	weights := c.eng.Global()
	w := &window{round: r.ID, sampled: map[int]bool{}, closeAt: c.closeAt, weights: weights,
		frames: map[int][]byte{}, extra: map[int]int{}}
	for _, i := range r.Sampled {
		w.sampled[i] = true
	}
	starts, err := roundStarts(r.ID, c.closeAt.Sub(tick), weights)
	if err != nil {
		c.log.Error("encode round_start", "err", err)
	}
	c.fmu.Lock()
	c.window = w
	c.snap.status = c.statusOf(protocol.StateRunning, tick, w)
	online := 0
	for i := range c.eng.File.LHAs {
		if starts[0] == nil || !c.liveLocked(i) || !c.startsFor(w, i) {
			continue
		}
		if w.sampled[i] {
			online++
			c.tr.Send(i, protocol.Binary, starts[1])
		} else {
			c.tr.Send(i, protocol.Binary, starts[0])
		}
	}
	c.fmu.Unlock()
	c.log.Info("round opened", "round", r.ID, "sampled", len(r.Sampled), "online", online, "closes", c.closeAt.Format(time.RFC3339Nano))
}

// release sends a committed round at its release tick (emu held): each
// buffered frame's answer to its sender, stale_round to frames that
// arrived outside a window, and the round_result to every connected LHA;
// the public snapshot moves to the tick. Releasing is idempotent by round
// number: the engine refuses a second release of the same round.
func (c *Coordinator) release(p *release, tick time.Time) error {
	if _, err := c.eng.markReleased(p.rereleased); err != nil {
		c.log.Error("release", "round", p.res.Event.Round, "err", err)
		return nil // released already: nothing is sent twice
	}
	log := c.eng.Events()
	finished := c.eng.Finished()
	// The schedule as of the release: unless the study has ended, the
	// next round opens now, or at the next campaign's start.
	t0 := c.eng.ScheduleStart()
	sch := &protocol.Schedule{Start: &t0, RoundLength: protocol.Duration(c.length), RoundSlack: protocol.Duration(c.slack)}
	if finished == "" && p.res.Event.Round < c.lastRound() {
		opens := c.nextOpening(tick)
		by, rel := opens.Add(c.length-c.slack), opens.Add(c.length)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = p.res.Event.Round+1, &opens, &by, &rel
	}
	_, b, err := protocol.Encode(&protocol.RoundResult{Event: p.res.Event, Weights: p.res.Weights, Schedule: sch})
	if err != nil {
		return err
	}
	// fmu is held until the release's messages are queued, so that an
	// acknowledgement (queued under fmu, see Frame) is either before them
	// with its frame's verdict among them, or after them with its verdict
	// at the next release.
	c.fmu.Lock()
	late := c.late
	c.late = map[int]int{}
	c.snap.lastSent = b
	c.snap.log = log
	c.snap.status.Round = p.res.Event.Round
	c.snap.status.EpsilonSpent = p.res.Event.Epsilon
	c.snap.status.EpsilonPublic = c.eng.PublicEpsilon()
	asOf := tick
	c.snap.status.AsOf = &asOf
	if s := c.snap.status.Schedule; s != nil {
		// The next round as the round_result says it (none when the study
		// has ended); when it opens at this tick, open replaces it.
		x := *s
		x.Round, x.Opens, x.TrainBy, x.Release = sch.Round, sch.Opens, sch.TrainBy, sch.Release
		c.snap.status.Schedule = &x
	}
	c.snap.status.Turn = nil
	// Each sender's verdicts go out just before the release, at the same
	// tick: an update acknowledged before the round's result and not
	// refused before it was counted, so the client can say so. Nothing
	// here depends on timing beyond the tick.
	var fatal []int
	for _, lha := range sortedKeys(p.verdicts) {
		if !c.tr.Online(lha) {
			continue
		}
		for _, v := range p.verdicts[lha] {
			c.tr.Send(lha, protocol.Text, encodeErr(v.code, v.round, v.msg))
			if v.code.Fatal() {
				fatal = append(fatal, lha)
			}
		}
	}
	for _, lha := range sortedKeys(late) {
		c.tr.Send(lha, protocol.Text, encodeErr(protocol.CodeStaleRound, 0,
			fmt.Sprintf("%d frame(s) arrived while no round was taking updates", late[lha])))
	}
	c.tr.Broadcast(protocol.Binary, b)
	c.fmu.Unlock()
	for _, lha := range fatal {
		c.tr.Drop(lha, "bad frame")
	}
	if c.hooks.Released != nil {
		c.hooks.Released(p.res.Event.Round, c.now(tick).Sub(tick.Add(-c.length)))
	}
	c.log.Info("round released", "round", p.res.Event.Round, "model_sha256", p.res.Event.ModelSHA256, "rereleased", p.rereleased)
	// Recorded once sent: a crash before this line leaves the round
	// unreleased in the store, and the restart sends it again.
	if err := c.eng.recordRelease(p.res.Event.Round, tick, p.rereleased); err != nil {
		c.log.Error("release not recorded", "round", p.res.Event.Round, "err", err)
	}
	return nil
}

func sortedKeys[V any](m map[int]V) []int {
	k := make([]int, 0, len(m))
	for i := range m {
		k = append(k, i)
	}
	slices.Sort(k)
	return k
}

// encodeErr encodes a protocol error message.
func encodeErr(code protocol.Code, round int, msg string) []byte {
	_, b, err := protocol.Encode(&protocol.Error{Code: code, Round: round, Message: msg})
	if err != nil {
		panic("study: cannot encode an error message: " + err.Error())
	}
	return b
}

func (c *Coordinator) encodeFinished() ([]byte, error) {
	m := &protocol.Finished{Rounds: c.eng.Rounds(), Epsilon: c.eng.EpsilonSpent(), Reason: c.eng.Finished()}
	if ev := c.eng.Events(); len(ev) > 0 {
		m.ModelSHA256 = ev[len(ev)-1].ModelSHA256
	}
	_, b, err := protocol.Encode(m)
	return b, err
}

// finish announces the end of the study at tick (emu held).
func (c *Coordinator) finish(tick time.Time) {
	b, err := c.encodeFinished()
	if err != nil {
		c.log.Error("encode finished", "err", err)
		return
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.snap.finished != nil {
		return // announced already (a study that had ended before the start: in every welcome)
	}
	c.snap.status = c.statusOf(protocol.StateFinished, tick, nil)
	c.snap.finished = b
	c.tr.Broadcast(protocol.Text, b)
	c.log.Info("study finished", "rounds", c.eng.Rounds(), "epsilon", c.eng.EpsilonSpent(), "reason", c.eng.Finished())
}

// Status returns the public status: the snapshot taken at the last
// schedule tick (it changes at ticks only; nothing in it depends on who
// takes part).
func (c *Coordinator) Status() protocol.Status {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.snap.status
}

// Admin returns the public status and the open round with its sample, for
// the admin (the open round waits for a commit in progress).
func (c *Coordinator) Admin() (protocol.Status, *protocol.AdminRound) {
	c.emu.Lock()
	defer c.emu.Unlock()
	st := c.Status()
	o := c.eng.Current()
	if o == nil {
		return st, nil
	}
	ar := &protocol.AdminRound{Round: o.ID, Online: o.Online, Received: o.Received, Rejected: o.Rejected, Started: o.Started, Sampled: []string{}}
	for _, i := range o.Sampled {
		ar.Sampled = append(ar.Sampled, c.eng.File.LHAs[i].Name)
	}
	return st, ar
}

// Committed returns the committed rounds, ε spent, the end reason ("" while
// the study runs) and a copy of the global model, consistently.
func (c *Coordinator) Committed() (rounds int, eps float64, finished string, global []float64) {
	c.emu.Lock()
	defer c.emu.Unlock()
	return c.eng.Rounds(), c.eng.EpsilonSpent(), c.eng.Finished(), slices.Clone(c.eng.Global())
}

// Progress returns the committed rounds and ε spent (for metrics).
func (c *Coordinator) Progress() (rounds int, eps float64) {
	c.emu.Lock()
	defer c.emu.Unlock()
	return c.eng.Rounds(), c.eng.EpsilonSpent()
}

// WithEngine calls f with the engine, serialised with Tick (f must only
// read it).
func (c *Coordinator) WithEngine(f func(e *Engine)) {
	c.emu.Lock()
	defer c.emu.Unlock()
	f(c.eng)
}
