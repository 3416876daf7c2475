package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/vugu/vugu"
)

// The dashboard decodes the coordinator's admin answers with the types
// both sides share (shared/protocol), without importing the server.
type (
	AdminStatus        = protocol.AdminStatus
	AdminLHA           = protocol.AdminLHA
	AdminOpenRound     = protocol.AdminRound
	AdminParticipation = protocol.Participation
)

// AdminUpcoming is what the coordinator's round loop waits for, sent
// beside the admin status (coordinator/study.Upcoming, same JSON names):
// the start quorum, a restarted study's wait for its LHAs, the next
// round's opening and a round recorded but not yet sent. A coordinator
// that does not send it (one that predates it, the Worker) leaves it
// zero, and the dashboard says less.
type AdminUpcoming struct {
	StartQuorum    int        `json:"start_quorum"`
	ResumeBy       *time.Time `json:"resume_by"`
	NextRound      int        `json:"next_round"`
	NextRoundOpens *time.Time `json:"next_round_opens"`
	PendingRound   int        `json:"pending_round"`
	PendingRelease *time.Time `json:"pending_release"`
	// HelperKey is the Worker's last check of the helper's key (a study
	// with a helper on Cloudflare only; serve refuses to start with
	// another key instead).
	HelperKey *AdminHelperKey `json:"helper_key"`
}

// AdminHelperKey is the Worker's check of the helper's key: State is
// "asking", "matches", "differs" or "no answer"; Words say it with both
// fingerprints and what to do.
type AdminHelperKey struct {
	State     string     `json:"state"`
	CheckedAt *time.Time `json:"checked_at"`
	Words     string     `json:"words"`
}

// LedgerExport is the part of the ledger export (/api/admin/ledger) the
// dashboard shows.
type LedgerExport struct {
	Format       string  `json:"format"`
	EpsilonSpent float64 `json:"epsilon_spent"`
	Rounds       []struct {
		Round           int     `json:"round"`
		SampleRate      float64 `json:"sample_rate"`
		NoiseMultiplier float64 `json:"noise_multiplier"`
		Epsilon         float64 `json:"epsilon"`
		Delta           float64 `json:"delta"`
		ModelSHA256     string  `json:"model_sha256"`
		// Rereleased: committed before a restart of the coordinator and
		// released after it.
		Rereleased bool `json:"rereleased"`
	} `json:"rounds"`
	Study struct {
		ClipNorm float64 `json:"clip_norm"`
		Rounds   int     `json:"rounds"` // the rounds planned at creation
	} `json:"study"`
	// NoiseMultiplier is c of the rounds planned at creation.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	// TopUps are the budget's raises, in order (docs/deployment.md,
	// "Raising the budget").
	TopUps []LedgerTopUp `json:"top_ups"`
}

// LedgerTopUp is the part of one top-up in the ledger export that the
// dashboard shows.
type LedgerTopUp struct {
	Number          int       `json:"number"`
	FromEpsilon     float64   `json:"from_epsilon"`
	Epsilon         float64   `json:"epsilon"`
	Rounds          int       `json:"rounds"`
	NoiseMultiplier float64   `json:"noise_multiplier"`
	At              time.Time `json:"at"`
}

// AdminRoundRow is one line of the dashboard's round table.
type AdminRoundRow struct {
	Round                               int
	Sampled, Online, Received, Rejected int
	Duration                            time.Duration
	Epsilon                             float64
	HasParticipation                    bool
	// Rereleased: the round was committed before a restart of the
	// coordinator and released at the first slot after it.
	Rereleased bool
}

// AdminState is the state of the coordinator dashboard.
type AdminState struct {
	Env   vugu.EventEnv
	Base  string // the coordinator's origin, e.g. http://127.0.0.1:8080
	Token string // the admin token (from the URL fragment)
	// Fetch performs a GET with the header "Authorization: Bearer token"
	// and returns the HTTP status and body. Required. (The browser build
	// uses the fetch API directly: net/http would add 1.3 MB gzip to the app.)
	Fetch func(ctx context.Context, url, token string) (status int, body []byte, err error)
	// Every is the polling interval. Defaults to 2 s.
	Every time.Duration
	// Post performs a POST like Fetch; when set, a demo coordinator that
	// holds its rounds for the browser seat offers a start button
	// (DemoWaiting).
	Post func(ctx context.Context, url, token string) (status int, body []byte, err error)
	// DemoWaiting: this is `fedcast demo`, holding its rounds until the
	// seat joins or someone presses start here.
	DemoWaiting bool
	DemoProblem string

	Status    *AdminStatus
	Upcoming  AdminUpcoming
	Ledger    *LedgerExport
	Table     []AdminRoundRow // newest first
	Problem   *Problem
	Updated   time.Time
	EpsChart  *Chart
	LedgerURL string // blob: URL of the last ledger export
	LedgerErr string

	ledgerRaw []byte
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
	var st AdminStatus
	var up AdminUpcoming
	var led LedgerExport
	b, err := s.get(ctx, "/api/admin/status")
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err == nil {
		err = json.Unmarshal(b, &up)
	}
	var raw []byte
	if err == nil {
		raw, err = s.get(ctx, "/api/admin/ledger")
	}
	if err == nil {
		err = json.Unmarshal(raw, &led)
	}
	waiting := false
	if err == nil && s.Post != nil {
		// Only `fedcast demo` answers this path (200 with the admin token).
		code, b, derr := s.Fetch(ctx, strings.TrimSuffix(s.Base, "/")+DemoStartPath, s.Token)
		var d struct {
			Waiting bool `json:"waiting"`
		}
		waiting = derr == nil && code == 200 && json.Unmarshal(b, &d) == nil && d.Waiting
	}
	s.lock()
	defer s.unlock()
	if err != nil {
		s.Problem = adminProblem(err)
		return err
	}
	s.DemoWaiting = waiting
	s.Problem = nil
	s.Status = &st
	s.Upcoming = up
	s.Ledger = &led
	s.ledgerRaw = raw
	s.Updated = time.Now()
	s.Table = roundRows(&st, &led)
	s.EpsChart = epsilonChart(&st, &led)
	return nil
}

func adminProblem(err error) *Problem {
	if errors.Is(err, ErrUnauthorized) {
		return &Problem{Title: "The coordinator did not accept this dashboard link",
			Fix: "Open the exact dashboard link printed when the study was started. Anyone without it sees nothing here."}
	}
	return &Problem{Title: "The coordinator cannot be reached", Detail: TechLine(err),
		Fix: "Check that the coordinator is running; this page retries by itself."}
}

// DemoStartPath is where `fedcast demo` takes the admin's start (POST)
// and says whether it is waiting (GET: {"waiting": …}).
const DemoStartPath = "/api/demo/start"

// StartDemo asks a waiting demo to begin its rounds now. Call it from a
// goroutine.
func (s *AdminState) StartDemo(ctx context.Context) {
	if s.Post == nil {
		return
	}
	code, b, err := s.Post(ctx, strings.TrimSuffix(s.Base, "/")+DemoStartPath, s.Token)
	s.lock()
	defer s.unlock()
	switch {
	case err != nil:
		s.DemoProblem = "The start did not reach the coordinator: " + err.Error()
	case code != 204 && code != 200:
		s.DemoProblem = fmt.Sprintf("The coordinator refused the start (%d): %s", code, strings.TrimSpace(string(b)))
	default:
		s.DemoProblem = ""
		s.DemoWaiting = false
	}
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

// ExportLedger offers the last fetched ledger export as a download
// (call under the render lock).
func (s *AdminState) ExportLedger() {
	if len(s.ledgerRaw) == 0 {
		s.LedgerErr = "The ledger has not been fetched yet; wait a moment and try again."
		return
	}
	s.LedgerErr = ""
	s.LedgerURL = objectURL(s.LedgerURL, string(s.ledgerRaw), "application/json")
}

// roundRows joins the ledger's privacy events with the admin-only
// participation records, newest round first.
func roundRows(st *AdminStatus, led *LedgerExport) []AdminRoundRow {
	part := map[int]AdminParticipation{}
	for _, p := range st.Participation {
		part[p.Round] = p
	}
	rows := make([]AdminRoundRow, 0, len(led.Rounds))
	for i := len(led.Rounds) - 1; i >= 0; i-- {
		r := led.Rounds[i]
		row := AdminRoundRow{Round: r.Round, Epsilon: r.Epsilon, Rereleased: r.Rereleased}
		if p, ok := part[r.Round]; ok {
			row.HasParticipation = true
			row.Sampled, row.Online, row.Received, row.Rejected, row.Duration = p.Sampled, p.Online, p.Received, p.Rejected, p.Duration
		}
		rows = append(rows, row)
	}
	return rows
}

// epsilonChart plots ε after each round against the budget.
func epsilonChart(st *AdminStatus, led *LedgerExport) *Chart {
	pts := []Point{{0, 0}}
	for _, r := range led.Rounds {
		pts = append(pts, Point{float64(r.Round), r.Epsilon})
	}
	c := &Chart{
		Title:  "Privacy budget spent after each round",
		XLabel: "round",
		YLabel: "ε spent",
		Lines:  []Line{{Name: "ε spent", Class: "eps", Points: pts, Markers: len(pts) <= 40}},
		HRefs:  []Ref{{At: st.EpsilonBudget, Label: "budget ε = " + FormatEpsilon(st.EpsilonBudget), Class: "budget"}},
	}
	if st.Rounds > 0 {
		c.VRefs = []Ref{{At: float64(st.Rounds), Label: "planned rounds", Class: "planned"}}
	}
	return c
}
