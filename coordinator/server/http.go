package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// --- HTTP API ---

// Status is the public status: nothing in it depends on who takes part.
type Status = protocol.Status

// PublicStatus returns the public status: the snapshot taken at the last
// schedule tick (it changes at ticks only).
func (s *Server) PublicStatus() Status { return s.co.Status() }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.PublicStatus())
}

func (s *Server) admin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !s.tokens.Admin(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fedcast admin"`)
			http.Error(w, "admin token required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// AdminStatus is the admin dashboard's view: participation included.
type AdminStatus = protocol.AdminStatus

// AdminLHA is one enrolled LHA's connection state.
type AdminLHA = protocol.AdminLHA

// AdminRound is the open round.
type AdminRound = protocol.AdminRound

// AdminView is the answer of /api/admin/status: the admin status and
// what the round loop waits for (the start quorum, a restart's wait, the
// next round's opening), for the dashboard.
type AdminView struct {
	AdminStatus
	study.Upcoming
}

func (s *Server) serveAdminStatus(w http.ResponseWriter, r *http.Request) {
	// The ledger is read after the snapshot, so that the participation
	// record covers every round the snapshot counts (a "finished" state
	// comes with all rounds' records).
	st, open := s.co.Admin()
	up := s.co.Upcoming()
	counts := s.co.Counts()
	s.mu.Lock()
	a := AdminStatus{Status: st, Enrolled: len(s.eng.File.LHAs), Online: len(s.conns), Ready: counts.Ready, OpenRound: open}
	for i, l := range s.eng.File.LHAs {
		x := AdminLHA{Name: l.Name}
		if c := s.conns[i]; c != nil {
			x.Online = true
			since := c.since
			x.OnlineSince = &since
		}
		a.LHAs = append(a.LHAs, x)
	}
	s.mu.Unlock()
	parts, err := s.ledger.Participation()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a.Participation = parts
	if a.Participation == nil {
		a.Participation = []ledger.Participation{}
	}
	writeJSON(w, AdminView{AdminStatus: a, Upcoming: up})
}

func (s *Server) serveLedger(w http.ResponseWriter, r *http.Request) {
	e, err := s.ledger.Export(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, e)
}

// Model is the JSON form of a global model (protocol.Model).
type Model = protocol.Model

func (s *Server) serveModel(w http.ResponseWriter, r *http.Request) {
	rounds, _, finished, g := s.co.Committed()
	m := protocol.NewModel(rounds, finished != "", s.eng.Study.Layers, g)
	writeJSON(w, m)
}
