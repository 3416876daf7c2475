package object

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// MaxReceivedMessage is the platform's limit on one websocket message a
// Durable Object receives (SQLite-backed objects: 32 MiB). A study whose
// update frame would be larger is refused when the object starts.
const MaxReceivedMessage = 32 << 20

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
// store State and Forwarded (when not nil) and wait for them to be
// durable, then the sends in order, then the closes, then the Fetch and
// the KeyFetch, then set the alarm to Alarm (zero: no alarm). Log lines
// are for the worker's log.
type Effects struct {
	State  []byte
	Sends  []Send
	Closes []Close
	Alarm  time.Time
	Log    []string
	// Forwarded (not nil) is the report set of a study with a helper
	// forwarded for a round, stored with State before anything goes out
	// and handed back to New after a restart.
	Forwarded []byte
	// Fetch (not nil) is a request to the study's helper, sent after the
	// closes: see Fetch.
	Fetch *Fetch
	// KeyFetch (not nil) asks for the helper's public key, to compare it
	// with the study's (helperkey.go).
	KeyFetch *KeyFetch
	// Reply (not nil) answers the admin request that made the call, after
	// the state is durable (topup.go).
	Reply *Reply
}

func (fx *Effects) send(c int, binary bool, b []byte) {
	fx.Sends = append(fx.Sends, Send{Conn: c, Binary: binary, Data: b})
}

func (fx *Effects) logf(format string, a ...any) {
	fx.Log = append(fx.Log, fmt.Sprintf(format, a...))
}

// conn is one accepted websocket.
type conn struct {
	lha   int // -1 until it joined
	since time.Time
}

// Object is one study's Durable Object in memory: the connections and
// the study's Coordinator. It is not safe for concurrent use: the Durable
// Object calls it one event at a time.
type Object struct {
	file   *study.File
	raw    []byte // the study file's bytes
	tokens *study.Tokens
	eng    *study.Engine
	co     *study.Coordinator
	store  *study.MemStore
	saved  int // store.Changes last handed out in Effects.State
	limit  int64
	next   study.Next
	broken error

	conns map[int]*conn
	lhas  map[int]int // LHA → its connection
	fails *study.AuthFailures

	prior []byte        // the forwarded set stored before the last restart
	fwd   *forwarded    // the set forwarded to the helper for its round
	ans   *helperAnswer // the helper's answer, not taken yet
	key   *keyCheck     // the check of the helper's key (nil: no helper)

	fx *Effects // the effects of the call in progress (the Transport writes here)
}

// New opens the study described by the study file raw (its JSON bytes)
// on the state bytes stored by an earlier call (nil for a new study) at
// time now; forwarded is the last Effects.Forwarded stored (nil: none). The returned effects hold the initial state to store and the
// first alarm.
func New(raw, stored, forwarded []byte, now time.Time) (*Object, *Effects, error) {
	f, err := study.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	key, err := newKeyCheck(f)
	if err != nil {
		return nil, nil, err
	}
	o := &Object{file: f, tokens: study.NewTokens(f), store: &study.MemStore{}, conns: map[int]*conn{}, lhas: map[int]int{},
		fails: study.NewAuthFailures(0, 0), prior: forwarded, key: key}
	if stored != nil {
		st := &study.State{}
		if err := st.UnmarshalBinary(stored); err != nil {
			return nil, nil, fmt.Errorf("object: the stored state: %w", err)
		}
		o.store.S = st
	}
	fx := &Effects{}
	o.fx = fx
	defer func() { o.fx = nil }()
	if err := o.open(raw, now); err != nil {
		return nil, nil, err
	}
	return o, o.finishCall(fx), nil
}

// open opens the engine and the Coordinator on the object's store (as
// at a restart: an open round is abandoned) and runs the schedule at now.
func (o *Object) open(raw []byte, now time.Time) error {
	var err error
	o.eng, err = study.Open(o.file, raw, o.store, &study.Options{Now: func() time.Time { return now }})
	if err != nil {
		return err
	}
	o.raw = raw
	o.limit = protocol.FrameSize(len(o.eng.Global()))
	if o.limit > MaxReceivedMessage {
		return fmt.Errorf("object: the study's model has %d parameters: an update frame of %d bytes exceeds the platform's %d-byte websocket message limit", len(o.eng.Global()), o.limit, MaxReceivedMessage)
	}
	opt := study.DriverOptions{Transport: transport{o}, Logger: slog.New(logHandler{o})}
	if o.eng.Secure() {
		opt.Helper = o.aggregate
	}
	o.co, err = study.NewCoordinator(o.eng, opt, now)
	if err != nil {
		return err
	}
	o.tick(now)
	return nil
}

// call runs f with fx as the call's effects.
func (o *Object) call(f func()) *Effects {
	fx := &Effects{}
	o.fx = fx
	defer func() { o.fx = nil }()
	f()
	return o.finishCall(fx)
}

// tick runs the Coordinator's schedule at now, and asks for the helper's
// key when that is due (the first tick after a load asks).
func (o *Object) tick(now time.Time) {
	o.checkKey(now)
	if o.broken != nil {
		return
	}
	next, err := o.co.Tick(now)
	if err != nil {
		o.broken = err
		o.fx.logf("the study stops: %v", err)
		o.next = study.Next{}
		return
	}
	o.next = next
}

// finishCall completes fx: the state bytes if the store changed, and the
// next alarm.
func (o *Object) finishCall(fx *Effects) *Effects {
	if o.store.S != nil && o.store.Changes != o.saved {
		b, err := o.store.S.MarshalBinary()
		if err != nil {
			o.broken = err
			fx.logf("cannot encode the state: %v", err)
		} else {
			fx.State, o.saved = b, o.store.Changes
		}
	}
	fx.Alarm = o.next.At
	return fx
}

// Alarm runs what the schedule has due at now (the Durable Object's
// alarm). An alarm with nothing due, a repeat or an early one, changes
// nothing.
func (o *Object) Alarm(now time.Time) *Effects { return o.call(func() { o.tick(now) }) }

// waiting reports whether the schedule waits for LHAs rather than for a
// time that has come: then a join or a leave may start it (the start
// quorum, or the quorum after a restart). When the alarm's time has come,
// the alarm does it: an arrival never moves the schedule.
func (o *Object) waiting(now time.Time) bool {
	return !o.next.Finished && (o.next.At.IsZero() || now.Before(o.next.At))
}

// Status returns the public status (a snapshot taken at schedule ticks).
func (o *Object) Status() protocol.Status { return o.co.Status() }

// ReadLimit is the largest frame an authenticated connection may send.
func (o *Object) ReadLimit() int64 { return o.limit }

// StateBytes returns the committed state as stored.
func (o *Object) StateBytes() ([]byte, error) { return o.store.S.MarshalBinary() }

// Admin reports whether token is the study's admin token.
func (o *Object) Admin(token string) bool { return token != "" && o.tokens.Admin(token) }

// Model is the admin's GET /api/admin/model answer, the same JSON as
// serve's.
type Model struct {
	Round       int       `json:"round"`
	Final       bool      `json:"final"`
	Layers      []int     `json:"layers"`
	ModelSHA256 string    `json:"model_sha256"`
	Weights     []float64 `json:"weights"`
}

// Model returns the committed global model.
func (o *Object) Model() Model {
	rounds, _, finished, g := o.co.Committed()
	return Model{Round: rounds, Final: finished != "", Layers: o.eng.Study.Layers, ModelSHA256: protocol.HashHex(g), Weights: g}
}

// AdminStatus returns the admin-only status.
func (o *Object) AdminStatus() protocol.AdminStatus {
	st, open := o.co.Admin()
	a := protocol.AdminStatus{Status: st, Enrolled: len(o.file.LHAs), Online: len(o.lhas), Ready: o.co.Counts().Ready, OpenRound: open,
		Participation: []protocol.Participation{}}
	for i, l := range o.file.LHAs {
		x := protocol.AdminLHA{Name: l.Name}
		if c, ok := o.lhas[i]; ok {
			x.Online = true
			s := o.conns[c].since
			x.OnlineSince = &s
		}
		a.LHAs = append(a.LHAs, x)
	}
	if s := o.store.S; s != nil {
		a.Participation = append(a.Participation, s.Participation...)
	}
	return a
}

// AdminView is the admin's GET /api/admin/status answer, the same JSON
// as serve's: the admin status and what the round loop waits for (the
// start quorum, a restart's wait, the next round's opening), which the
// dashboard puts in words.
type AdminView struct {
	protocol.AdminStatus
	study.Upcoming
	// HelperKey is the last check of the helper's key (absent for a study
	// without a helper). serve has no such field: it refuses to start
	// with another key.
	HelperKey *HelperKey `json:"helper_key,omitempty"`
}

// AdminView returns the admin-only status with what comes next.
func (o *Object) AdminView() AdminView {
	v := AdminView{AdminStatus: o.AdminStatus(), Upcoming: o.co.Upcoming()}
	if o.key != nil {
		k := o.key.HelperKey
		v.HelperKey = &k
	}
	return v
}

// CheckOrigin decides whether a websocket from a page at origin (empty:
// not a browser) may open against host (the request's Host): the
// coordinator's own host, or one of the study's origin patterns.
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
		target := u.Host
		if strings.Contains(p, "://") {
			target = origin
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return nil
		}
	}
	return fmt.Errorf("object: origin %s is not allowed (add it to the study's origins)", origin)
}

// ErrTooManyFailures refuses a handshake from an address past its limit
// of failed attempts (the Durable Object answers HTTP 429).
var ErrTooManyFailures = errors.New("object: too many failed attempts to join from this address: check the join link, then retry in a minute")

// Connect authenticates websocket c at its handshake: protocols are its
// Sec-WebSocket-Protocol header values (the join token, see
// protocol.ParseAuth), addr the client's address (CF-Connecting-IP; ""
// if unknown). A valid token is always accepted: the LHA joins and gets
// its first frames. Otherwise the refusal is counted for addr, and the
// answer is an error frame and an immediate close, or, past the limit,
// ErrTooManyFailures (no websocket at all). No connection waits for a
// hello.
func (o *Object) Connect(c int, protocols []string, addr string, now time.Time) (*Effects, error) {
	token, perr := protocol.ParseAuth(protocols)
	lha := -1
	if perr == nil {
		lha = o.tokens.LHA(token)
	}
	if lha < 0 && o.fails.Fail(addrKey(addr), now) > o.fails.Max() {
		return nil, ErrTooManyFailures
	}
	return o.call(func() {
		switch {
		case errors.Is(perr, protocol.ErrNoToken):
			o.refuse(c, protocol.CodeVersion, "the join token must come in the websocket handshake: this client is older than the coordinator; update it or reload the page")
		case errors.Is(perr, protocol.ErrVersion):
			o.refuse(c, protocol.CodeVersion, perr.Error())
		case perr != nil:
			o.refuse(c, protocol.CodeUnauthorized, perr.Error())
		case lha < 0:
			o.refuse(c, protocol.CodeUnauthorized, "unknown join token")
		case protocol.IsForecastOnly(protocols):
			o.visit(c, lha)
		default:
			o.conns[c] = &conn{lha: -1, since: now}
			o.join(c, o.conns[c], lha, now)
		}
	}), nil
}

// visit answers a forecast-only visit c of LHA lha
// (protocol.ForecastOnly) with the frames a joining connection starts
// with, and closes it. c is never registered: the LHA's live connection
// keeps its place and its state.
func (o *Object) visit(c, lha int) {
	msgs, err := o.co.Visit(lha)
	if err != nil {
		o.refuse(c, protocol.CodeInternal, "cannot welcome: "+err.Error())
		return
	}
	for _, m := range msgs {
		o.fx.send(c, m.Kind == protocol.Binary, m.B)
	}
	o.fx.Closes = append(o.fx.Closes, Close{Conn: c, Code: CloseNormal, Reason: "forecast visit answered"})
}

// refuse answers an unauthenticated connection c with code and closes
// it; nothing of it is kept.
func (o *Object) refuse(c int, code protocol.Code, msg string) {
	o.fx.send(c, false, encodeErr(code, 0, "%s", msg))
	o.fx.Closes = append(o.fx.Closes, Close{Conn: c, Code: ClosePolicyViolation, Reason: code.String()})
}

// addrKey is the unit of the failed-attempt limit: the address, or for
// an IPv6 address its /64.
func addrKey(addr string) string {
	if a, err := netip.ParseAddr(addr); err == nil && a.Unmap().Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return addr
}

// Disconnect forgets connection c.
func (o *Object) Disconnect(c int, now time.Time) *Effects {
	return o.call(func() {
		k, ok := o.conns[c]
		if !ok {
			return
		}
		o.drop(c)
		if k.lha >= 0 && o.waiting(now) {
			o.tick(now)
		}
	})
}

func (o *Object) drop(c int) {
	if k, ok := o.conns[c]; ok && k.lha >= 0 && o.lhas[k.lha] == c {
		delete(o.lhas, k.lha)
	}
	delete(o.conns, c)
}

func encodeErr(code protocol.Code, round int, format string, a ...any) []byte {
	_, b, err := protocol.Encode(&protocol.Error{Code: code, Round: round, Message: fmt.Sprintf(format, a...)})
	if err != nil {
		panic("object: encode error: " + err.Error())
	}
	return b
}

// closeConn sends the error code and closes connection c.
func (o *Object) closeConn(c int, ws int, code protocol.Code, format string, a ...any) {
	o.fx.send(c, false, encodeErr(code, 0, format, a...))
	o.fx.Closes = append(o.fx.Closes, Close{Conn: c, Code: ws, Reason: code.String()})
	o.drop(c)
}

// Message handles one frame from connection c at now.
func (o *Object) Message(c int, binary bool, b []byte, now time.Time) *Effects {
	return o.call(func() {
		k, ok := o.conns[c]
		switch {
		case !ok, k.lha < 0:
		case int64(len(b)) > o.limit:
			o.closeConn(c, CloseTooBig, protocol.CodeTooLarge, "a frame of %d bytes is over the limit of %d", len(b), o.limit)
		case !binary && study.IsReady(b):
			if o.co.Ready(k.lha, now, func(kind protocol.Kind, b []byte) { o.fx.send(c, kind == protocol.Binary, b) }) && o.waiting(now) {
				o.tick(now)
			}
		case !binary:
			code, msg := study.TextVerdict(b)
			if code.Fatal() {
				o.closeConn(c, ClosePolicyViolation, code, "%s", msg)
			} else {
				o.fx.send(c, false, encodeErr(code, 0, "%s", msg))
			}
		default:
			o.co.Frame(k.lha, b, now, func(kind protocol.Kind, b []byte) { o.fx.send(c, kind == protocol.Binary, b) })
		}
	})
}

// join registers authenticated connection c as LHA lha's and queues its
// first frames.
func (o *Object) join(c int, k *conn, lha int, now time.Time) {
	if old, ok := o.lhas[lha]; ok && old != c {
		o.closeConn(old, ClosePolicyViolation, protocol.CodeReplaced, "a newer connection joined with this token")
	}
	err := o.co.Join(lha, now, func(msgs []study.Msg) {
		k.lha, k.since = lha, now
		o.lhas[lha] = c
		for _, m := range msgs {
			o.fx.send(c, m.Kind == protocol.Binary, m.B)
		}
	})
	if err != nil {
		o.closeConn(c, CloseInternal, protocol.CodeInternal, "cannot welcome: %v", err)
		return
	}
	o.fx.logf("LHA %q joined (%d online)", o.file.LHAs[lha].Name, len(o.lhas))
	if o.waiting(now) {
		o.tick(now)
	}
}

// transport is the Coordinator's Transport: frames go into the effects of
// the call in progress.
type transport struct{ o *Object }

func (t transport) Send(lha int, k protocol.Kind, b []byte) {
	if c, ok := t.o.lhas[lha]; ok {
		t.o.fx.send(c, k == protocol.Binary, b)
	}
}

func (t transport) Broadcast(k protocol.Kind, b []byte) {
	lhas := make([]int, 0, len(t.o.lhas))
	for lha := range t.o.lhas {
		lhas = append(lhas, lha)
	}
	slices.Sort(lhas)
	for _, lha := range lhas {
		t.o.fx.send(t.o.lhas[lha], k == protocol.Binary, b)
	}
}

func (t transport) Drop(lha int, reason string) {
	if c, ok := t.o.lhas[lha]; ok {
		t.o.fx.Closes = append(t.o.fx.Closes, Close{Conn: c, Code: ClosePolicyViolation, Reason: reason})
		t.o.drop(c)
	}
}

func (t transport) Online(lha int) bool { _, ok := t.o.lhas[lha]; return ok }

func (t transport) Connected() int { return len(t.o.lhas) }

// logHandler turns the Coordinator's log records into the call's log lines.
type logHandler struct{ o *Object }

func (logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String())
	b.WriteString(" ")
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	if h.o.fx != nil {
		h.o.fx.Log = append(h.o.fx.Log, b.String())
	}
	return nil
}

func (h logHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logHandler) WithGroup(string) slog.Handler      { return h }
