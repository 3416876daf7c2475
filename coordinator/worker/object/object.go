package object

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/fl"
	"github.com/fedcast/fedcast/shared/protocol"
)

// MaxReceivedMessage is the platform's limit on one websocket message a
// Durable Object receives (SQLite-backed objects: 32 MiB). A study whose
// update frame would be larger is refused when the object starts.
const MaxReceivedMessage = 32 << 20

// MaxStoredValue is the largest value written under one storage key: the
// state is split into chunks of this size (the key-value backend's limit
// is 128 KiB per value, the SQLite backend's 2 MB for key and value).
const MaxStoredValue = 120 << 10

// Websocket close codes the object asks for.
const (
	CloseNormal          = 1000
	ClosePolicyViolation = 1008
	CloseTooBig          = 1009
	CloseInternal        = 1011
)

// Send is one frame for connection Conn.
type Send struct {
	Conn   int
	Binary bool
	Data   []byte
}

// Close asks to close connection Conn (after its sends of the same call).
type Close struct {
	Conn   int
	Code   int
	Reason string
}

// Effects are what a call asks the Durable Object to do, in this order:
// store State (when not nil) and wait for it to be durable, then the
// sends in order, then the closes, then set the alarm to Alarm (zero: no
// alarm). Log lines are for the worker's log.
type Effects struct {
	State  []byte
	Sends  []Send
	Closes []Close
	Alarm  time.Time
	Log    []string
}

func (fx *Effects) send(c int, binary bool, b []byte) {
	fx.Sends = append(fx.Sends, Send{Conn: c, Binary: binary, Data: b})
}

func (fx *Effects) logf(format string, a ...any) {
	fx.Log = append(fx.Log, fmt.Sprintf(format, a...))
}

// conn is one accepted websocket.
type conn struct {
	lha   int // -1 until its hello
	since time.Time
}

// window is the open round: its sample, its close and the frames
// buffered until then (raw, the first per LHA).
type window struct {
	round   int
	sampled map[int]bool
	opens   time.Time
	closeAt time.Time
	weights []float64
	frames  map[int][]byte
	extra   map[int]int
}

type verdict struct {
	code  protocol.Code
	round int
	msg   string
}

// pending is a committed round waiting for its release tick.
type pending struct {
	res      *study.Result
	verdicts map[int][]verdict
}

type action int

const (
	actNone   action = iota
	actResume        // after a restart: pick the next slot
	actOpen          // release the pending round (if any), open the next
	actClose         // close the window, aggregate, commit
)

// Object is one study's Durable Object state in memory. It is not safe for
// concurrent use: the Durable Object calls it one event at a time.
type Object struct {
	file   *study.File
	tokens *study.Tokens
	eng    *study.Engine
	store  *study.MemStore
	saved  int // store.Changes last handed out in Effects.State
	limit  int64

	conns map[int]*conn
	lhas  map[int]int // LHA → its connection

	t0     time.Time
	length time.Duration
	slack  time.Duration
	slot   int64 // the slot of the next round
	next   time.Time
	act    action

	win    *window
	pend   *pending
	late   map[int]int
	status protocol.Status
	log    []protocol.Event
	last   []byte // the last released round_result
	done   []byte // the finished message, once the study has ended
	ack    []byte
	broken error
	parts  []protocol.Participation
}

// New opens the study described by the study file raw (its JSON bytes)
// on the state bytes stored by an earlier call (nil for a new study) at
// time now. The returned effects hold the initial state to store and the
// first alarm.
func New(raw, stored []byte, now time.Time) (*Object, *Effects, error) {
	f, err := study.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	o := &Object{file: f, tokens: study.NewTokens(f), store: &study.MemStore{},
		conns: map[int]*conn{}, lhas: map[int]int{}, late: map[int]int{},
		length: time.Duration(f.RoundLength), slack: time.Duration(f.RoundSlack)}
	if stored != nil {
		st := &study.State{}
		if err := st.UnmarshalBinary(stored); err != nil {
			return nil, nil, fmt.Errorf("object: the stored state: %w", err)
		}
		o.store.S = st
	}
	o.eng, err = study.Open(f, raw, o.store, &study.Options{Now: func() time.Time { return now }})
	if err != nil {
		return nil, nil, err
	}
	o.limit = protocol.FrameSize(len(o.eng.Global()))
	if o.limit > MaxReceivedMessage {
		return nil, nil, fmt.Errorf("object: the study's model has %d parameters: an update frame of %d bytes exceeds the platform's %d-byte websocket message limit", len(o.eng.Global()), o.limit, MaxReceivedMessage)
	}
	_, o.ack, err = protocol.Encode(&protocol.Accepted{})
	if err != nil {
		return nil, nil, err
	}
	o.log = o.eng.Events()
	o.t0 = o.eng.ScheduleStart()
	if st := o.store.S; st != nil {
		o.parts = slices.Clone(st.Participation)
	}
	fx := &Effects{}
	state := protocol.StateWaiting
	switch {
	case o.eng.Finished() != "":
		state = protocol.StateFinished
	case !o.t0.IsZero() || o.eng.Rounds() > 0:
		state = protocol.StateRunning
		if o.t0.IsZero() { // a study committed before schedules: start one now
			if err := o.eng.SetScheduleStart(now); err != nil {
				return nil, nil, err
			}
			o.t0 = now
		}
		o.next, o.act = now.Add(f.ResumeWait()), actResume
		fx.logf("resumed after %d committed rounds: the next round opens at the first slot after %d LHAs are online or %s", o.eng.Rounds(), f.Quorum(), o.next.Format(time.RFC3339Nano))
	}
	o.status = o.statusOf(state, now, nil)
	if res := o.eng.LastResult(); res != nil {
		if o.last, err = o.encodeResult(res, nil); err != nil {
			return nil, nil, err
		}
	}
	if state == protocol.StateFinished {
		if o.done, err = o.encodeFinished(); err != nil {
			return nil, nil, err
		}
	}
	o.saveState(fx)
	fx.Alarm = o.next
	return o, fx, nil
}

// saveState hands out the state bytes if the store changed since the last
// call.
func (o *Object) saveState(fx *Effects) {
	if o.store.S == nil || o.store.Changes == o.saved {
		return
	}
	b, err := o.store.S.MarshalBinary()
	if err != nil {
		o.broken = err
		fx.logf("cannot encode the state: %v", err)
		return
	}
	fx.State, o.saved = b, o.store.Changes
}

// finishCall completes fx for the caller.
func (o *Object) finishCall(fx *Effects) *Effects {
	o.saveState(fx)
	fx.Alarm = o.next
	return fx
}

// Status returns the public status (a snapshot taken at schedule ticks).
func (o *Object) Status() protocol.Status { return o.status }

// ReadLimit is the largest frame an authenticated connection may send.
func (o *Object) ReadLimit() int64 { return o.limit }

// StateBytes returns the committed state as stored.
func (o *Object) StateBytes() ([]byte, error) { return o.store.S.MarshalBinary() }

// Admin reports whether token is the study's admin token.
func (o *Object) Admin(token string) bool { return token != "" && o.tokens.Admin(token) }

// Global returns the current global model.
func (o *Object) Global() []float64 { return o.eng.Global() }

// AdminStatus returns the admin-only status at now.
func (o *Object) AdminStatus(now time.Time) protocol.AdminStatus {
	a := protocol.AdminStatus{Status: o.status, Enrolled: len(o.file.LHAs), Online: len(o.lhas),
		Participation: slices.Clone(o.parts)}
	for i, l := range o.file.LHAs {
		x := protocol.AdminLHA{Name: l.Name}
		if c, ok := o.lhas[i]; ok {
			x.Online = true
			s := o.conns[c].since
			x.OnlineSince = &s
		}
		a.LHAs = append(a.LHAs, x)
	}
	if w := o.win; w != nil {
		r := &protocol.AdminRound{Round: w.round, Started: w.opens, Received: len(w.frames)}
		for i := range w.sampled {
			r.Sampled = append(r.Sampled, o.file.LHAs[i].Name)
			if _, ok := o.lhas[i]; ok {
				r.Online++
			}
		}
		slices.Sort(r.Sampled)
		a.OpenRound = r
	}
	return a
}

// CheckOrigin decides whether a websocket from a page at origin (empty:
// not a browser) may open against host (the request's Host).
func (o *Object) CheckOrigin(origin, host string) error {
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("object: bad Origin %q", origin)
	}
	if strings.EqualFold(u.Host, host) {
		return nil
	}
	for _, p := range o.file.Origins {
		if !strings.Contains(p, "://") {
			if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(u.Host)); ok {
				return nil
			}
			continue
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(origin)); ok {
			return nil
		}
	}
	return fmt.Errorf("object: origin %s is not allowed (add it to the study's origins)", origin)
}

// Connect records a new websocket c (not authenticated yet).
func (o *Object) Connect(c int, now time.Time) *Effects {
	o.conns[c] = &conn{lha: -1, since: now}
	return o.finishCall(&Effects{})
}

// Disconnect forgets connection c.
func (o *Object) Disconnect(c int, now time.Time) *Effects {
	fx := &Effects{}
	if k, ok := o.conns[c]; ok {
		if k.lha >= 0 && o.lhas[k.lha] == c {
			delete(o.lhas, k.lha)
		}
		delete(o.conns, c)
	}
	return o.finishCall(fx)
}

func encodeErr(code protocol.Code, round int, format string, a ...any) []byte {
	_, b, err := protocol.Encode(&protocol.Error{Code: code, Round: round, Message: fmt.Sprintf(format, a...)})
	if err != nil {
		panic("object: encode error: " + err.Error())
	}
	return b
}

func (o *Object) reject(fx *Effects, c int, code protocol.Code, msg string) {
	fx.send(c, false, encodeErr(code, 0, "%s", msg))
	fx.Closes = append(fx.Closes, Close{Conn: c, Code: ClosePolicyViolation, Reason: code.String()})
	delete(o.conns, c)
}

// Message handles one frame from connection c at now.
func (o *Object) Message(c int, binary bool, b []byte, now time.Time) *Effects {
	fx := &Effects{}
	k, ok := o.conns[c]
	if !ok {
		return o.finishCall(fx)
	}
	if k.lha < 0 {
		o.hello(fx, c, k, binary, b, now)
		return o.finishCall(fx)
	}
	if int64(len(b)) > o.limit {
		fx.send(c, false, encodeErr(protocol.CodeTooLarge, 0, "a frame of %d bytes is over the limit of %d", len(b), o.limit))
		fx.Closes = append(fx.Closes, Close{Conn: c, Code: CloseTooBig, Reason: "message too big"})
		o.drop(c)
		return o.finishCall(fx)
	}
	if !binary {
		code, msg := handleText(b)
		fx.send(c, false, encodeErr(code, 0, "%s", msg))
		if code.Fatal() {
			fx.Closes = append(fx.Closes, Close{Conn: c, Code: ClosePolicyViolation, Reason: code.String()})
			o.drop(c)
		}
		return o.finishCall(fx)
	}
	fx.send(c, false, o.ack)
	w := o.win
	switch {
	case w == nil:
		o.late[k.lha]++
	case w.frames[k.lha] != nil:
		w.extra[k.lha]++
	default:
		w.frames[k.lha] = slices.Clone(b)
	}
	return o.finishCall(fx)
}

func (o *Object) drop(c int) {
	if k, ok := o.conns[c]; ok && k.lha >= 0 && o.lhas[k.lha] == c {
		delete(o.lhas, k.lha)
	}
	delete(o.conns, c)
}

// handleText answers a text frame from an authenticated client (clients
// send only one hello and binary updates).
func handleText(b []byte) (protocol.Code, string) {
	m, err := protocol.Decode(protocol.Text, b)
	switch {
	case errors.Is(err, protocol.ErrVersion):
		return protocol.CodeVersion, err.Error()
	case errors.Is(err, protocol.ErrTooLarge):
		return protocol.CodeTooLarge, err.Error()
	case err != nil:
		return protocol.CodeBadFrame, err.Error()
	}
	if _, ok := m.(*protocol.Hello); ok {
		return protocol.CodeHelloExpected, "hello was already received"
	}
	return protocol.CodeBadFrame, fmt.Sprintf("a client may not send %s", m.Type())
}

// hello authenticates connection c.
func (o *Object) hello(fx *Effects, c int, k *conn, binary bool, b []byte, now time.Time) {
	if binary || len(b) > 4096 {
		o.reject(fx, c, protocol.CodeHelloExpected, "the first message must be hello")
		return
	}
	m, err := protocol.Decode(protocol.Text, b)
	if errors.Is(err, protocol.ErrVersion) {
		o.reject(fx, c, protocol.CodeVersion, err.Error())
		return
	}
	h, ok := m.(*protocol.Hello)
	if err != nil || !ok {
		o.reject(fx, c, protocol.CodeHelloExpected, "the first message must be hello")
		return
	}
	lha := o.tokens.LHA(h.Token)
	if lha < 0 {
		o.reject(fx, c, protocol.CodeUnauthorized, "unknown join token")
		return
	}
	if old, ok := o.lhas[lha]; ok && old != c {
		fx.send(old, false, encodeErr(protocol.CodeReplaced, 0, "a newer connection joined with this token"))
		fx.Closes = append(fx.Closes, Close{Conn: old, Code: ClosePolicyViolation, Reason: "replaced"})
		delete(o.conns, old)
	}
	k.lha, k.since = lha, now
	o.lhas[lha] = c
	st := o.status
	_, wb, err := protocol.Encode(&protocol.Welcome{Study: o.eng.Study, LHA: o.file.LHAs[lha].Name, State: st.State,
		Schedule: st.Schedule, Log: slices.Clone(o.log)})
	if err != nil {
		o.reject(fx, c, protocol.CodeInternal, "cannot encode the welcome")
		return
	}
	fx.send(c, false, wb)
	if o.last != nil {
		fx.send(c, true, o.last)
	}
	switch w := o.win; {
	case o.done != nil:
		fx.send(c, false, o.done)
	case w != nil && w.sampled[lha] && w.frames[lha] == nil:
		if _, sb, err := protocol.Encode(&protocol.RoundStart{Round: w.round, TimeLeft: max(0, w.closeAt.Sub(now)), Weights: w.weights}); err == nil {
			fx.send(c, true, sb)
		}
	}
	fx.logf("LHA %s joined (%d online)", o.file.LHAs[lha].Name, len(o.lhas))
	o.quorumCheck(fx, now)
}

// quorumCheck starts the schedule when the start quorum is online, or
// moves a resume to the next slot.
func (o *Object) quorumCheck(fx *Effects, now time.Time) {
	if len(o.lhas) < o.file.Quorum() || o.done != nil {
		return
	}
	switch {
	case o.t0.IsZero() && o.eng.Rounds() == 0 && o.act == actNone:
		if err := o.eng.SetScheduleStart(now); err != nil {
			o.fail(fx, err)
			return
		}
		o.t0, o.slot = now, 0
		o.next, o.act = now, actOpen
		fx.logf("start quorum reached: the round schedule starts at %s (round length %s, slack %s)", now.Format(time.RFC3339Nano), o.length, o.slack)
	case o.act == actResume:
		o.resume(fx, now, "quorum online")
	}
}

func (o *Object) resume(fx *Effects, now time.Time, why string) {
	o.slot = nextSlot(o.t0, o.length, now)
	o.next, o.act = o.tick(o.slot), actOpen
	fx.logf("resuming (%s): the next round opens at %s", why, o.next.Format(time.RFC3339Nano))
}

func (o *Object) tick(j int64) time.Time { return o.t0.Add(time.Duration(j) * o.length) }

// nextSlot returns the first slot of the schedule (t0, l) that starts at
// or after now.
func nextSlot(t0 time.Time, l time.Duration, now time.Time) int64 {
	if !now.After(t0) {
		return 0
	}
	return int64((now.Sub(t0) + l - 1) / l)
}

func (o *Object) fail(fx *Effects, err error) {
	if o.broken == nil {
		o.broken = err
	}
	o.next, o.act = time.Time{}, actNone
	fx.logf("the study stops: %v", err)
}

// Alarm runs what the schedule has due at now, each action at its own
// tick. An alarm with nothing due (a repeat, or early) changes nothing.
func (o *Object) Alarm(now time.Time) *Effects {
	fx := &Effects{}
	for o.broken == nil && o.act != actNone && !now.Before(o.next) {
		at := o.next
		switch o.act {
		case actResume:
			o.resume(fx, now, "restart grace over")
		case actOpen:
			o.open(fx, at, now)
		case actClose:
			o.close(fx, at, now)
		}
	}
	return o.finishCall(fx)
}

func (o *Object) online(lha int) bool { _, ok := o.lhas[lha]; return ok }

// open releases the pending round at tick and opens the next round.
func (o *Object) open(fx *Effects, tick, now time.Time) {
	if o.pend != nil {
		o.release(fx, tick)
	}
	r, err := o.eng.BeginAt(tick, o.online)
	if errors.Is(err, study.ErrFinished) {
		o.finish(fx, tick)
		return
	}
	if err != nil {
		o.fail(fx, err)
		return
	}
	closeAt := tick.Add(o.length - o.slack)
	w := &window{round: r.ID, sampled: map[int]bool{}, opens: tick, closeAt: closeAt, weights: slices.Clone(o.eng.Global()),
		frames: map[int][]byte{}, extra: map[int]int{}}
	for _, i := range r.Sampled {
		w.sampled[i] = true
	}
	o.win = w
	o.status = o.statusOf(protocol.StateRunning, tick, w)
	_, sb, err := protocol.Encode(&protocol.RoundStart{Round: r.ID, TimeLeft: max(0, closeAt.Sub(now)), Weights: w.weights})
	if err != nil {
		o.fail(fx, err)
		return
	}
	online := 0
	for _, i := range r.Sampled {
		if c, ok := o.lhas[i]; ok {
			online++
			fx.send(c, true, sb)
		}
	}
	fx.logf("round %d opened at %s: %d sampled, %d online; closes %s", r.ID, tick.Format(time.RFC3339Nano), len(r.Sampled), online, closeAt.Format(time.RFC3339Nano))
	o.next, o.act = closeAt, actClose
}

// close ends the window at closeAt, submits the buffered frames in LHA
// order and commits the round; the release waits for the slot's end.
func (o *Object) close(fx *Effects, closeAt, now time.Time) {
	w := o.win
	o.win = nil
	verdicts := map[int][]verdict{}
	received := 0
	if w != nil {
		received = len(w.frames)
		lhas := make([]int, 0, len(w.frames))
		for lha := range w.frames {
			lhas = append(lhas, lha)
		}
		slices.Sort(lhas)
		for _, lha := range lhas {
			if v, ok := o.submit(lha, w.frames[lha]); !ok {
				verdicts[lha] = append(verdicts[lha], v)
			}
		}
		for lha, n := range w.extra {
			verdicts[lha] = append(verdicts[lha], verdict{protocol.CodeDuplicateUpdate, w.round,
				fmt.Sprintf("%d more frame(s) in round %d ignored: only the first frame of a round is read", n, w.round)})
		}
	}
	res, err := o.eng.CompleteAt(func() time.Time { return now })
	if err != nil {
		o.fail(fx, err)
		return
	}
	if st := o.store.S; st != nil {
		o.parts = slices.Clone(st.Participation)
	}
	o.pend = &pending{res: res, verdicts: verdicts}
	fx.logf("round %d committed: eps %.6g, %d received, model %s", res.Event.Round, res.Event.Epsilon, received, res.Event.ModelSHA256)
	o.slot++
	if t := o.tick(o.slot); now.After(t) {
		k := nextSlot(o.t0, o.length, now)
		fx.logf("committing overran the slack: the release of round %d moves %d slot(s) later", res.Event.Round, k-o.slot)
		o.slot = k
	}
	o.next, o.act = o.tick(o.slot), actOpen
}

// submit decodes one buffered frame of LHA lha and hands it to the engine.
func (o *Object) submit(lha int, b []byte) (verdict, bool) {
	m, err := protocol.Decode(protocol.Binary, b)
	switch {
	case errors.Is(err, protocol.ErrNotFinite):
		return verdict{protocol.CodeBadUpdate, 0, err.Error()}, false
	case errors.Is(err, protocol.ErrVersion):
		return verdict{protocol.CodeVersion, 0, err.Error()}, false
	case errors.Is(err, protocol.ErrTooLarge):
		return verdict{protocol.CodeTooLarge, 0, err.Error()}, false
	case err != nil:
		return verdict{protocol.CodeBadFrame, 0, err.Error()}, false
	}
	u, ok := m.(*protocol.Update)
	if !ok {
		return verdict{protocol.CodeBadFrame, 0, fmt.Sprintf("a client may not send %s", m.Type())}, false
	}
	err = o.eng.Submit(lha, u.Round, u.Weights)
	switch {
	case err == nil:
		return verdict{}, true
	case errors.Is(err, study.ErrFinished):
		return verdict{protocol.CodeFinished, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrStaleRound):
		return verdict{protocol.CodeStaleRound, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrNotSampled):
		return verdict{protocol.CodeNotSampled, u.Round, err.Error()}, false
	case errors.Is(err, study.ErrDuplicate):
		return verdict{protocol.CodeDuplicateUpdate, u.Round, err.Error()}, false
	case errors.Is(err, fl.ErrUpdateLength), errors.Is(err, fl.ErrNotFinite):
		return verdict{protocol.CodeBadUpdate, u.Round, err.Error()}, false
	}
	return verdict{protocol.CodeInternal, u.Round, err.Error()}, false
}

func (o *Object) encodeResult(res *study.Result, sch *protocol.Schedule) ([]byte, error) {
	_, b, err := protocol.Encode(&protocol.RoundResult{Event: res.Event, Weights: res.Weights, Schedule: sch})
	return b, err
}

// release sends the pending committed round at tick: each buffered
// frame's verdict to its sender, stale_round for frames outside a window,
// then the round_result to everyone.
func (o *Object) release(fx *Effects, tick time.Time) {
	p := o.pend
	o.pend = nil
	if err := o.eng.Release(); err != nil {
		fx.logf("release: %v", err)
	}
	o.log = o.eng.Events()
	t0 := o.t0
	sch := &protocol.Schedule{Start: &t0, RoundLengthMillis: o.length.Milliseconds(), RoundSlackMillis: o.slack.Milliseconds()}
	if o.eng.Finished() == "" {
		opens, by, rel := tick, tick.Add(o.length-o.slack), tick.Add(o.length)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = p.res.Event.Round+1, &opens, &by, &rel
	}
	b, err := o.encodeResult(p.res, sch)
	if err != nil {
		o.fail(fx, err)
		return
	}
	o.last = b
	o.status.Round, o.status.EpsilonSpent = p.res.Event.Round, p.res.Event.Epsilon
	asOf := tick
	o.status.AsOf = &asOf
	if s := o.status.Schedule; s != nil {
		c := *s
		c.Round, c.Opens, c.TrainBy, c.Release = 0, nil, nil, nil
		o.status.Schedule = &c
	}
	lhas := make([]int, 0, len(p.verdicts))
	for lha := range p.verdicts {
		lhas = append(lhas, lha)
	}
	slices.Sort(lhas)
	for _, lha := range lhas {
		c, ok := o.lhas[lha]
		if !ok {
			continue
		}
		fatal := false
		for _, v := range p.verdicts[lha] {
			fx.send(c, false, encodeErr(v.code, v.round, "%s", v.msg))
			fatal = fatal || v.code.Fatal()
		}
		if fatal {
			fx.Closes = append(fx.Closes, Close{Conn: c, Code: ClosePolicyViolation, Reason: "bad frame"})
		}
	}
	for lha, n := range o.late {
		if c, ok := o.lhas[lha]; ok {
			fx.send(c, false, encodeErr(protocol.CodeStaleRound, 0, "%d frame(s) arrived while no round was taking updates", n))
		}
	}
	o.late = map[int]int{}
	for _, c := range o.sortedConns() {
		fx.send(c, true, b)
	}
	for _, cl := range fx.Closes {
		o.drop(cl.Conn)
	}
	fx.logf("round %d released at %s (model %s)", p.res.Event.Round, tick.Format(time.RFC3339Nano), p.res.Event.ModelSHA256)
}

// sortedConns lists the authenticated connections by LHA.
func (o *Object) sortedConns() []int {
	lhas := make([]int, 0, len(o.lhas))
	for lha := range o.lhas {
		lhas = append(lhas, lha)
	}
	slices.Sort(lhas)
	cs := make([]int, len(lhas))
	for i, lha := range lhas {
		cs[i] = o.lhas[lha]
	}
	return cs
}

func (o *Object) encodeFinished() ([]byte, error) {
	m := &protocol.Finished{Rounds: o.eng.Rounds(), Epsilon: o.eng.EpsilonSpent(), Reason: o.eng.Finished()}
	if n := len(o.log); n > 0 {
		m.ModelSHA256 = o.log[n-1].ModelSHA256
	}
	_, b, err := protocol.Encode(m)
	return b, err
}

// finish announces the end of the study at tick.
func (o *Object) finish(fx *Effects, tick time.Time) {
	o.next, o.act = time.Time{}, actNone
	b, err := o.encodeFinished()
	if err != nil {
		o.fail(fx, err)
		return
	}
	o.done = b
	o.status = o.statusOf(protocol.StateFinished, tick, nil)
	for _, c := range o.sortedConns() {
		fx.send(c, false, b)
	}
	fx.logf("study finished at %s: %d rounds, eps %.6g, reason %s", tick.Format(time.RFC3339Nano), o.eng.Rounds(), o.eng.EpsilonSpent(), o.eng.Finished())
}

// statusOf builds the public status at tick; open is the round open then.
func (o *Object) statusOf(state string, tick time.Time, open *window) protocol.Status {
	st := o.eng.Study
	sch := &protocol.Schedule{RoundLengthMillis: o.length.Milliseconds(), RoundSlackMillis: o.slack.Milliseconds()}
	if !o.t0.IsZero() {
		t := o.t0
		sch.Start = &t
	}
	if open != nil {
		opens, by, rel := open.opens, open.closeAt, open.closeAt.Add(o.slack)
		sch.Round, sch.Opens, sch.TrainBy, sch.Release = open.round, &opens, &by, &rel
	}
	asOf := tick
	return protocol.Status{
		Round: o.eng.Rounds(), Rounds: st.Rounds, EpsilonSpent: o.eng.EpsilonSpent(),
		EpsilonBudget: st.Epsilon, Delta: st.Delta, NoiseMultiplier: st.NoiseMultiplier,
		State: state, InsecureSeed: st.InsecureSeed, Name: st.Name, Clients: st.Clients,
		ExpectedClients: st.ExpectedClients, SampleRate: st.SampleRate, Protocol: protocol.Version,
		FinishReason: o.eng.Finished(), Schedule: sch, AsOf: &asOf,
	}
}
