package acceptance

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

type roundRecord struct {
	Round    int     `json:"round"`
	Sampled  int     `json:"sampled"`
	Online   int     `json:"online_at_start"`
	Received int     `json:"received"`
	Cut      int     `json:"connections_cut"`
	Seconds  float64 `json:"seconds"`
	Deadline bool    `json:"ended_at_deadline"`
}

// TestDropouts cuts the TCP connection of 10 % of the LHAs, chosen at
// random, at a random moment of every round (uniform in its first 0.3 s);
// the sessions reconnect. Every round must be committed within its
// deadline (start to commit, from the ledger's admin-only participation
// record), and the study must finish with the right ε. Two further LHAs
// join and never answer, so the rounds that sample them run into the
// deadline. Reduced: 100 LHAs, 8 rounds; FEDCAST_ACCEPTANCE=1: 30 rounds.
func TestDropouts(t *testing.T) {
	const n, m, stalled = 100, 20, 2
	// Rounds run on a 2 s schedule: each takes updates for 1.8 s (its
	// window, L minus the L/10 slack), whoever answers.
	const roundLength = 2 * time.Second
	const deadline = roundLength * 9 / 10 // the window
	// A round with every sampled LHA answering takes 0.1-0.3 s here
	// (E = 30 steps of the paper's model): cuts land in that span.
	const cutWithin = 300 * time.Millisecond
	rounds := 8
	if full() {
		rounds = 30
	}
	names, data := synthLHAs(t, n, 5)
	dir := t.TempDir()
	studyPath, tokens, admin := studyNew(t, dir, names, "--epsilon", "3", "--rounds", fmt.Sprint(rounds), "--expected", fmt.Sprint(m),
		"--from", novFrom, "--to", novTo, "--round-length", roundLength.String())
	state := filepath.Join(dir, "state")
	seed := uint64(3)
	p := serve(t, studyPath, state, "127.0.0.1:0", &seed)
	ctx, cancel := withTimeout(15 * time.Minute)
	defer cancel()
	// The last `stalled` LHAs join and then never answer (a frozen tab):
	// like every round, rounds that sample one of them end at the window's close.
	lhas := startPool(t, ctx, p.base, names[:n-stalled], tokens[:n-stalled], data[:n-stalled], 300*time.Millisecond)
	for _, tok := range tokens[n-stalled:] {
		stall(t, ctx, p.base, tok)
	}

	// Each time a round opens (the admin status shows it), cut 10 % of
	// the connections at random moments within cutWithin.
	rng := rand.New(rand.NewPCG(4, 4))
	var cutMu sync.Mutex
	cuts := map[int]int{}
	seen := 0
	for {
		st, err := p.adminStatus(admin)
		if err != nil {
			t.Fatal(err)
		}
		if st.State == protocol.StateFinished {
			break
		}
		if o := st.OpenRound; o != nil && o.Round > seen {
			seen = o.Round
			for _, i := range randomSubset(rng, n-stalled, n/10) {
				time.AfterFunc(time.Duration(rng.Float64()*float64(cutWithin)), func() {
					if lhas.lhas[i].cut() {
						cutMu.Lock()
						cuts[o.Round]++
						cutMu.Unlock()
					}
				})
			}
		}
		time.Sleep(20 * time.Millisecond)
		if ctx.Err() != nil {
			t.Fatal("the study did not finish in time")
		}
	}
	time.Sleep(1100 * time.Millisecond) // let the last timers fire
	cutMu.Lock()
	defer cutMu.Unlock()
	if err := lhas.wait(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	adm, err := p.adminStatus(admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.stop(); err != nil {
		t.Errorf("graceful stop: %v", err)
	}
	e := exportLedger(t, state, "")
	if len(e.Rounds) != rounds || e.Finished == nil || e.Finished.Reason != "rounds" {
		t.Fatalf("ledger: %d rounds, finished %+v", len(e.Rounds), e.Finished)
	}
	want, _ := privacy.Epsilon(float64(m)/n, e.NoiseMultiplier, rounds, 1e-5)
	if math.Abs(e.EpsilonSpent-want) > 1e-12 {
		t.Errorf("ε %v, want %v", e.EpsilonSpent, want)
	}
	if _, problems := lhas.checkAgainst(e); len(problems) > 0 {
		t.Errorf("models received vs ledger: %v", problems)
	}
	var recs []roundRecord
	var secs []float64
	atDeadline, totalCuts := 0, 0
	for _, pa := range adm.Participation {
		r := roundRecord{Round: pa.Round, Sampled: pa.Sampled, Online: pa.Online, Received: pa.Received, Cut: cuts[pa.Round],
			Seconds: pa.Duration.Seconds(), Deadline: pa.Duration >= deadline}
		totalCuts += r.Cut
		if r.Deadline {
			atDeadline++
		}
		// Within the deadline: the round is closed at the deadline and
		// committed (aggregation, noise, synced ledger write) right after.
		if pa.Duration > deadline+time.Second {
			t.Errorf("round %d took %v, deadline %v", pa.Round, pa.Duration, deadline)
		}
		recs = append(recs, r)
		secs = append(secs, r.Seconds)
	}
	if len(recs) != rounds {
		t.Fatalf("%d participation records for %d rounds", len(recs), rounds)
	}
	if totalCuts < rounds*n/10/2 {
		t.Errorf("only %d connections were cut over %d rounds", totalCuts, rounds)
	}
	for _, l := range lhas.lhas {
		if l.err != nil {
			t.Errorf("LHA %s: %v", l.name, l.err)
		}
	}
	sort.Float64s(secs)
	writeResult(t, "dropouts", map[string]any{
		"lhas": n, "expected_clients": m, "rounds": rounds, "deadline_seconds": deadline.Seconds(),
		"connections_cut": totalCuts, "rounds_ended_at_deadline": atDeadline,
		"round_seconds_median": secs[len(secs)/2], "round_seconds_max": secs[len(secs)-1],
		"epsilon_spent": e.EpsilonSpent, "epsilon_expected": want, "per_round": recs,
	})
}

// stall joins with token, says ready, and then only reads (never sends an
// update) until the study finishes or ctx ends.
func stall(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/ws", &websocket.DialOptions{Subprotocols: protocol.Subprotocols(token)})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 24)
	_, ready, _ := protocol.Encode(&protocol.Ready{})
	if err := ws.Write(ctx, websocket.MessageText, ready); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer ws.CloseNow()
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	}()
}
