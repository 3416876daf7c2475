package ui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/vugu/vugu"
)

// AdminStatus is the coordinator's /api/admin/status answer.
type AdminStatus struct {
	Study           protocol.Study `json:"study"`
	State           string         `json:"state"`
	Round           int            `json:"round"`
	EpsilonSpent    float64        `json:"epsilon_spent"`
	NoiseMultiplier float64        `json:"noise_multiplier"`
	LHAs            []AdminLHA     `json:"lhas"`
	Rounds          []AdminRound   `json:"rounds"`
}

// AdminLHA is one enrolled LHA as the dashboard lists it.
type AdminLHA struct {
	Name   string `json:"name"`
	Online bool   `json:"online"`
}

// AdminRound is one committed round with its admin-only participation.
type AdminRound struct {
	Round          int     `json:"round"`
	Sampled        int     `json:"sampled"`
	Online         int     `json:"online"`
	Received       int     `json:"received"`
	Rejected       int     `json:"rejected"`
	DurationMillis int64   `json:"duration_ms"`
	Epsilon        float64 `json:"epsilon"`
}

// AdminState is the state of the coordinator dashboard.
type AdminState struct {
	Env    vugu.EventEnv
	Base   string // the coordinator's origin, e.g. http://127.0.0.1:8080
	Token  string // the admin token (from the URL fragment)
	// Fetch performs a GET with the header "Authorization: Bearer token"
	// and returns the HTTP status and body. Required. (The browser build
	// uses the fetch API directly: net/http would add 1.3 MB gzip to the app.)
	Fetch func(ctx context.Context, url, token string) (status int, body []byte, err error)
	// Every is the polling interval. Defaults to 2 s.
	Every time.Duration

	Status    *AdminStatus
	Problem   *Problem
	Updated   time.Time
	EpsChart  *Chart
	LedgerURL string // data: URL of the last ledger export
	LedgerErr string
}

func (s *AdminState) lock() {
	if s.Env != nil {
		s.Env.Lock()
	}
}

func (s *AdminState) unlock() {
	if s.Env != nil {
		s.Env.UnlockRender()
	}
}

// ErrUnauthorized is returned for a missing or wrong admin token.
var ErrUnauthorized = errors.New("ui: the coordinator refused the admin token")

// get fetches an admin endpoint with the bearer token.
func (s *AdminState) get(ctx context.Context, path string) ([]byte, error) {
	if s.Fetch == nil {
		return nil, errors.New("ui: no fetch function")
	}
	status, b, err := s.Fetch(ctx, strings.TrimSuffix(s.Base, "/")+path, s.Token)
	switch {
	case err != nil:
		return nil, err
	case status == 401 || status == 403:
		return nil, ErrUnauthorized
	case status != 200:
		return nil, fmt.Errorf("ui: %s answered %d: %s", path, status, strings.TrimSpace(string(b)))
	}
	return b, nil
}

// Refresh fetches the status once.
func (s *AdminState) Refresh(ctx context.Context) error {
	if s.Token == "" {
		s.lock()
		s.Problem = &Problem{Title: "No admin code in the link", Fix: "Open the dashboard link printed when the study was started (it ends in /admin# followed by a code)."}
		s.unlock()
		return ErrUnauthorized
	}
	b, err := s.get(ctx, "/api/admin/status")
	var st AdminStatus
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	s.lock()
	defer s.unlock()
	if err != nil {
		s.Problem = adminProblem(err)
		return err
	}
	s.Problem = nil
	s.Status = &st
	s.Updated = time.Now()
	s.EpsChart = epsilonChart(&st)
	return nil
}

func adminProblem(err error) *Problem {
	if errors.Is(err, ErrUnauthorized) {
		return &Problem{Title: "The coordinator did not accept this dashboard link",
			Fix: "Open the exact dashboard link printed when the study was started. Anyone without it sees nothing here."}
	}
	return &Problem{Title: "The coordinator cannot be reached", Detail: err.Error(),
		Fix: "Check that the coordinator is running; this page retries by itself."}
}

// Poll refreshes until ctx ends.
func (s *AdminState) Poll(ctx context.Context) {
	every := s.Every
	if every == 0 {
		every = 2 * time.Second
	}
	for {
		if err := s.Refresh(ctx); errors.Is(err, ErrUnauthorized) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// ExportLedger fetches the privacy ledger and offers it as a download.
func (s *AdminState) ExportLedger(ctx context.Context) {
	b, err := s.get(ctx, "/api/admin/ledger")
	s.lock()
	defer s.unlock()
	if err != nil {
		s.LedgerErr = "The ledger could not be fetched: " + err.Error()
		return
	}
	s.LedgerErr = ""
	s.LedgerURL = "data:application/json;base64," + base64.StdEncoding.EncodeToString(b)
}

// epsilonChart plots ε after each round against the budget.
func epsilonChart(st *AdminStatus) *Chart {
	pts := []Point{{0, 0}}
	for _, r := range st.Rounds {
		pts = append(pts, Point{float64(r.Round), r.Epsilon})
	}
	c := &Chart{
		Title:  "Privacy budget spent after each round",
		XLabel: "round",
		YLabel: "ε spent",
		Lines:  []Line{{Name: "ε spent", Class: "eps", Points: pts, Markers: len(pts) <= 40}},
		HRefs:  []Ref{{At: st.Study.Epsilon, Label: "budget ε = " + FormatEpsilon(st.Study.Epsilon), Class: "budget"}},
	}
	if st.Study.Rounds > 0 {
		c.VRefs = []Ref{{At: float64(st.Study.Rounds), Label: "planned rounds", Class: "planned"}}
	}
	return c
}

// OnlineCount is the number of LHAs connected now.
func (s *AdminState) OnlineCount() int {
	n := 0
	if s.Status != nil {
		for _, l := range s.Status.LHAs {
			if l.Online {
				n++
			}
		}
	}
	return n
}
