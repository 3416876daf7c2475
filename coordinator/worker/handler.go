package main

import (
	"encoding/json"
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

// handler is the worker's http.Handler. Routes under /do/ are the
// Durable Object's calls (the entry worker never forwards them from
// outside: see js/worker.mjs); the others are the coordinator's public
// and admin routes, as in serve.
//
//	POST /do/init        envelope {"now"} + [study file, stored state?] → effects
//	POST /do/connect     ?conn&now, X-Fedcast-Origin, X-Fedcast-Host → effects or 403
//	POST /do/message     ?conn&now&binary, body: the frame → effects
//	POST /do/disconnect  ?conn&now → effects
//	POST /do/alarm       ?now → effects
//	POST /web/csp        body: index.html → its Content-Security-Policy
//	GET  /api/status               public status
//	GET  /api/admin/status         admin status (Authorization: Bearer ADMINTOKEN)
//	GET  /api/admin/model          the current global model (JSON)
//	GET  /api/admin/state          the committed state as stored (JSON)
type handler struct {
	mu  sync.Mutex
	obj *object.Object
	err error // why init failed
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mu.Lock()
	defer h.mu.Unlock()
	p := r.URL.Path
	switch p {
	case "/do/init":
		h.init(w, r)
		return
	case "/web/csp":
		// The browser app's Content-Security-Policy, as serve sends it
		// (hashes of the page's inline scripts).
		page, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, web.ContentSecurityPolicy(page))
		return
	}
	if h.obj == nil {
		msg := "worker: the study is not loaded"
		if h.err != nil {
			msg = h.err.Error()
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	if strings.HasPrefix(p, "/do/") {
		h.call(w, r)
		return
	}
	switch p {
	case "/api/status":
		writeJSON(w, h.obj.Status())
	case "/api/admin/status", "/api/admin/model", "/api/admin/state":
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !h.obj.Admin(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fedcast admin"`)
			http.Error(w, "admin token required", http.StatusUnauthorized)
			return
		}
		switch p {
		case "/api/admin/status":
			writeJSON(w, h.obj.AdminStatus())
		case "/api/admin/model":
			writeJSON(w, h.obj.Model())
		default:
			b, err := h.obj.StateBytes()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
		}
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

// millis reads a Unix time in milliseconds (the Durable Object's clock).
func millis(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 {
		return time.Now()
	}
	return time.UnixMilli(ms)
}

func (h *handler) init(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, object.MaxEnvelope+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	hb, blobs, err := object.DecodeEnvelope(body)
	var head struct {
		Now int64 `json:"now"`
	}
	if err == nil {
		err = json.Unmarshal(hb, &head)
	}
	if err == nil && (len(blobs) < 1 || len(blobs) > 2) {
		err = fmt.Errorf("worker: init wants the study file and at most one stored state, got %d blobs", len(blobs))
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var stored []byte
	if len(blobs) == 2 && len(blobs[1]) > 0 {
		stored = blobs[1]
	}
	obj, fx, err := object.New(blobs[0], stored, time.UnixMilli(head.Now))
	if err != nil {
		h.obj, h.err = nil, err
		http.Error(w, "worker: cannot open the study: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h.obj, h.err = obj, nil
	writeEffects(w, fx)
}

func writeEffects(w http.ResponseWriter, fx *object.Effects) {
	b, err := fx.Encode()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func (h *handler) call(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	now := millis(q.Get("now"))
	c, _ := strconv.Atoi(q.Get("conn"))
	var fx *object.Effects
	switch r.URL.Path {
	case "/do/connect":
		if err := h.obj.CheckOrigin(r.Header.Get("X-Fedcast-Origin"), r.Header.Get("X-Fedcast-Host")); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		fx = h.obj.Connect(c, now)
	case "/do/message":
		// One frame more than the limit is enough to refuse it.
		b, err := io.ReadAll(io.LimitReader(r.Body, h.obj.ReadLimit()+1))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fx = h.obj.Message(c, q.Get("binary") == "1", b, now)
	case "/do/disconnect":
		fx = h.obj.Disconnect(c, now)
	case "/do/alarm":
		fx = h.obj.Alarm(now)
	default:
		http.NotFound(w, r)
		return
	}
	writeEffects(w, fx)
}
