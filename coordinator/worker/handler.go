package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fedcast/fedcast/coordinator/web"
	"github.com/fedcast/fedcast/coordinator/worker/object"
)

// handler is the worker's Go side. The Durable Object's events come in
// through Do (exported to JavaScript as binding.call by main_js.go: a
// synchronous call, no HTTP on the hot path); the public and admin routes
// are an http.Handler served by syumai/workers:
//
//	GET  /api/status         public status
//	GET  /api/admin/status   admin status (Authorization: Bearer ADMINTOKEN);
//	                         with a helper, its key check (helper_key)
//	GET  /api/admin/model    the committed global model (serve's JSON)
//	GET  /api/admin/state    the committed state as stored (JSON)
//	POST /web/csp            body: index.html → its Content-Security-Policy
//
// and one admin route that changes the state, so it comes in through Do
// (op "topup") for the Durable Object to store the state before it
// answers with the effects' Reply:
//
//	POST /api/admin/topup    body {"epsilon": NEW, "campaigns": K}: raise
//	                         the lifetime budget (docs/deploy-cloudflare.md)
//
// The lock is never held while waiting for JavaScript: answers are built
// under it and written after it is released.
type handler struct {
	mu  sync.Mutex
	obj *object.Object
	err error // why init failed
}

// Request is one Durable Object event for Do.
type Request struct {
	// Op is init, connect, message, disconnect, alarm, helper,
	// helper_key or topup.
	Op     string
	Conn   int
	Now    time.Time
	Binary bool
	// Data is the frame (message), the init envelope
	// ({"now"} + [study file, stored state?, stored forwarded set?]), the
	// helper's answer (helper: {"round", "status", "status_text"} + [body]),
	// the helper's answer for its key (helper_key: {"status",
	// "status_text"} + [body]),
	// the admin's top-up (topup: {"authorization"} + [body])
	// or, for connect, the request's Sec-WebSocket-Protocol header (the
	// join token).
	Data []byte
	// Origin and Host of a websocket request (connect), and the client's
	// address (CF-Connecting-IP).
	Origin, Host, Addr string
}

// ErrRefused wraps the reason a connect is refused (the Durable Object
// answers HTTP 403); ErrTooMany a connect from an address past its limit
// of failed attempts (HTTP 429).
var (
	ErrRefused = errors.New("refused")
	ErrTooMany = errors.New("too many")
)

// Do handles one Durable Object event and returns the encoded effects.
func (h *handler) Do(r Request) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Op == "init" {
		return h.init(r.Data, r.Now)
	}
	if h.obj == nil {
		return nil, h.notLoaded()
	}
	var fx *object.Effects
	switch r.Op {
	case "connect":
		if err := h.obj.CheckOrigin(r.Origin, r.Host); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		var err error
		if fx, err = h.obj.Connect(r.Conn, []string{string(r.Data)}, r.Addr, r.Now); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrTooMany, err)
		}
	case "message":
		fx = h.obj.Message(r.Conn, r.Binary, r.Data, r.Now)
	case "disconnect":
		fx = h.obj.Disconnect(r.Conn, r.Now)
	case "alarm":
		fx = h.obj.Alarm(r.Now)
	case "helper":
		a, err := decodeHelperAnswer(r.Data)
		if err != nil {
			return nil, err
		}
		fx = h.obj.HelperAnswer(a.Round, a.Status, a.StatusText, a.Body, r.Now)
	case "helper_key":
		a, err := decodeHelperAnswer(r.Data)
		if err != nil {
			return nil, err
		}
		fx = h.obj.HelperKeyAnswer(a.Status, a.StatusText, a.Body, r.Now)
	case "topup":
		fx = h.topUp(r.Data, r.Now)
	default:
		return nil, fmt.Errorf("worker: unknown call %q", r.Op)
	}
	return fx.Encode()
}

// helperAnswer is the helper's answer to a Fetch or a KeyFetch (no
// round), as the Durable Object hands it back (status 0: no answer,
// StatusText says why).
type helperAnswer struct {
	Round      int    `json:"round"`
	Status     int    `json:"status"`
	StatusText string `json:"status_text"`
	Body       []byte `json:"-"`
}

func decodeHelperAnswer(b []byte) (*helperAnswer, error) {
	hb, blobs, err := object.DecodeEnvelope(b)
	if err != nil {
		return nil, err
	}
	var a helperAnswer
	if err := json.Unmarshal(hb, &a); err != nil {
		return nil, fmt.Errorf("worker: the helper's answer: %w", err)
	}
	if len(blobs) > 1 {
		return nil, fmt.Errorf("worker: the helper's answer has %d bodies", len(blobs))
	}
	if len(blobs) == 1 {
		a.Body = blobs[0]
	}
	return &a, nil
}

// topUp is POST /api/admin/topup: the admin token, then the object's
// top-up. The answer is always in the effects' Reply.
func (h *handler) topUp(b []byte, now time.Time) *object.Effects {
	hb, blobs, err := object.DecodeEnvelope(b)
	var head struct {
		Authorization string `json:"authorization"`
	}
	if err == nil {
		err = json.Unmarshal(hb, &head)
	}
	if err == nil && len(blobs) != 1 {
		err = fmt.Errorf("worker: a top-up has one body, got %d", len(blobs))
	}
	if err != nil {
		return h.obj.Answer(object.ErrorReply(http.StatusBadRequest, "%v", err))
	}
	if tok, ok := strings.CutPrefix(head.Authorization, "Bearer "); !ok || !h.obj.Admin(tok) {
		return h.obj.Answer(object.ErrorReply(http.StatusUnauthorized, "admin token required"))
	}
	return h.obj.TopUp(blobs[0], now)
}

func (h *handler) notLoaded() error {
	if h.err != nil {
		return h.err
	}
	return errors.New("worker: the study is not loaded")
}

func (h *handler) init(body []byte, now time.Time) ([]byte, error) {
	hb, blobs, err := object.DecodeEnvelope(body)
	var head struct {
		Now int64 `json:"now"`
	}
	if err == nil {
		err = json.Unmarshal(hb, &head)
	}
	if err == nil && (len(blobs) < 1 || len(blobs) > 3) {
		err = fmt.Errorf("worker: init wants the study file, the stored state and the stored forwarded set (both optional), got %d blobs", len(blobs))
	}
	if err != nil {
		return nil, err
	}
	var stored, forwarded []byte
	if len(blobs) >= 2 && len(blobs[1]) > 0 {
		stored = blobs[1]
	}
	if len(blobs) == 3 && len(blobs[2]) > 0 {
		forwarded = blobs[2]
	}
	if head.Now > 0 {
		now = time.UnixMilli(head.Now)
	}
	obj, fx, err := object.New(blobs[0], stored, forwarded, now)
	if err != nil {
		h.obj, h.err = nil, fmt.Errorf("worker: cannot open the study: %w", err)
		return nil, h.err
	}
	h.obj, h.err = obj, nil
	return fx.Encode()
}

// answer is a response built under the lock.
type answer struct {
	status int
	ctype  string
	body   []byte
	header http.Header
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var a answer
	if r.URL.Path == "/web/csp" {
		// The browser app's Content-Security-Policy, as serve sends it
		// (hashes of the page's inline scripts).
		page, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			a = answer{status: http.StatusBadRequest, body: []byte(err.Error())}
		} else {
			a = answer{status: http.StatusOK, ctype: "text/plain; charset=utf-8", body: []byte(web.ContentSecurityPolicy(page))}
		}
	} else {
		a = h.api(r)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	for k, v := range a.header {
		w.Header()[k] = v
	}
	if a.ctype == "" {
		a.ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	w.Write(a.body)
}

func jsonAnswer(v any) answer {
	b, err := json.Marshal(v)
	if err != nil {
		return answer{status: http.StatusInternalServerError, body: []byte(err.Error())}
	}
	return answer{status: http.StatusOK, ctype: "application/json", body: append(b, '\n'),
		header: http.Header{"Cache-Control": {"no-store"}}}
}

// api answers the coordinator's GET routes (lock held only here).
func (h *handler) api(r *http.Request) answer {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return answer{status: http.StatusMethodNotAllowed, body: []byte("GET only"), header: http.Header{"Allow": {"GET, HEAD"}}}
	}
	if h.obj == nil {
		return answer{status: http.StatusServiceUnavailable, body: []byte(h.notLoaded().Error())}
	}
	p := r.URL.Path
	switch p {
	case "/api/status":
		return jsonAnswer(h.obj.Status())
	case "/api/admin/status", "/api/admin/model", "/api/admin/state":
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !h.obj.Admin(tok) {
			return answer{status: http.StatusUnauthorized, body: []byte("admin token required"),
				header: http.Header{"Www-Authenticate": {`Bearer realm="fedcast admin"`}}}
		}
		switch p {
		case "/api/admin/status":
			return jsonAnswer(h.obj.AdminView())
		case "/api/admin/model":
			return jsonAnswer(h.obj.Model())
		}
		b, err := h.obj.StateBytes()
		if err != nil {
			return answer{status: http.StatusInternalServerError, body: []byte(err.Error())}
		}
		return answer{status: http.StatusOK, ctype: "application/json", body: b, header: http.Header{"Cache-Control": {"no-store"}}}
	}
	return answer{status: http.StatusNotFound, body: []byte("404 page not found")}
}
