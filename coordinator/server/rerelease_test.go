package server

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/protocol"
)

// openOn opens the ledger at path and the research study on it.
func openOn(t *testing.T, path string, file *study.File, body []byte, seed uint64) (*ledger.Ledger, *study.Engine) {
	t.Helper()
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := study.Open(file, body, l.Store(), &study.Options{InsecureSeed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	return l, eng
}

// TestReReleaseAfterCrashLedger: the coordinator crashes after committing
// round 2 to the ledger and before releasing it. After the restart, round 2
// is released at the first slot, like any release: its round_result (the
// committed model) to every LHA online, a "round released" line in the log,
// and in the ledger export the round is marked "rereleased": true (round 1,
// released normally, is not).
func TestReReleaseAfterCrashLedger(t *testing.T) {
	const n = 3
	seed := uint64(5)
	file, secrets, err := study.Create(study.CreateOptions{Names: lhaNames(n), Template: study.File{Settings: protocol.Settings{Epsilon: 10, Rounds: 20,
		ExpectedClients: 2, Hidden: []int{4}, LocalEpochs: 1, RoundLength: study.Duration(time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := file.Marshal()
	path := filepath.Join(t.TempDir(), "ledger.db")
	var model2 string
	{ // The first life: round 1 released, round 2 committed, then the crash.
		l, eng := openOn(t, path, file, body, seed)
		for r := 1; r <= 2; r++ {
			if _, err := eng.Begin(nil); err != nil {
				t.Fatal(err)
			}
			res, err := eng.Complete()
			if err != nil {
				t.Fatal(err)
			}
			model2 = res.Event.ModelSHA256
			if r == 1 {
				if err := eng.Release(); err != nil {
					t.Fatal(err)
				}
			}
		}
		l.Close()
	}

	l, eng := openOn(t, path, file, body, seed)
	logs := &testkit.SyncBuffer{}
	srv, err := New(&Options{Engine: eng, Ledger: l, Logger: slog.New(slog.NewTextHandler(logs, nil)), RestartGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &life{fixture: &fixture{srv: srv, http: httptest.NewServer(srv), eng: eng, secrets: secrets, file: file,
		done: make(chan error, 1), cancel: cancel}, l: l, ctx: ctx}
	defer x.stop(t)
	if st := srv.PublicStatus(); st.Round != 1 {
		t.Errorf("public status before the re-release: round %d, want 1 (round 2 not yet released)", st.Round)
	}
	var conns []*raw
	for i := range n {
		c := readyRaw(t, x.fixture, secrets.LHAs[i])
		expect[*protocol.Welcome](c)
		conns = append(conns, c)
	}
	go func() { x.done <- srv.Run(ctx) }()
	for i, c := range conns {
		res := expect[*protocol.RoundResult](c)
		if res.Event.Round != 2 || res.Event.ModelSHA256 != model2 || protocol.HashHex(res.Weights) != model2 {
			t.Fatalf("LHA %d: round_result of round %d, model %.12s; want round 2, %.12s", i, res.Event.Round, res.Event.ModelSHA256, model2)
		}
	}
	x.waitRound(t, 30*time.Second) // round 3 opens at the same slot
	if l := logs.String(); !strings.Contains(l, `msg="round released" round=2 model_sha256=`+model2+" rereleased=true") {
		t.Errorf("serve log has no release line for round 2:\n%s", l)
	}
	ex, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Rounds) != 2 || ex.Rounds[0].Rereleased || !ex.Rounds[1].Rereleased {
		t.Errorf("ledger export rounds %+v: want round 2 (only) marked rereleased", ex.Rounds)
	}
	if last, err := l.LastReleased(); err != nil || last != 2 {
		t.Errorf("LastReleased = %d, %v; want 2", last, err)
	}
}
