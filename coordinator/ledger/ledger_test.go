package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

func open(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func genesis() study.Genesis {
	return study.Genesis{Study: []byte(`{"name":"t"}`), StudySHA256: "00", NoiseMultiplier: 4.5, Clients: 8,
		Model: []float64{0.1, 0.2, 0.3}, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func round(i int) *Round {
	return &Round{Event: protocol.Event{Round: i, SampleRate: 0.25, NoiseMultiplier: 4.5, Epsilon: 0.1 * float64(i), Delta: 1e-5},
		Committed: time.Date(2026, 1, 2, 3, 4, 5+i, 0, time.UTC), Model: []float64{float64(i), -1, 0.5}}
}

func TestCommitAndRead(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	if _, err := l.Genesis(); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Genesis on an empty ledger: %v, want ErrEmpty", err)
	}
	if err := l.Commit(round(1), nil); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Commit before Init: %v", err)
	}
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	if err := l.Init(genesis()); !errors.Is(err, ErrExists) {
		t.Fatalf("second Init: %v, want ErrExists", err)
	}
	for i := 1; i <= 3; i++ {
		if err := l.Commit(round(i), &Participation{Round: i, Sampled: 2, Online: 2, Received: 1, Duration: time.Duration(i) * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []int{2, 3, 5} {
		if err := l.Commit(round(bad), nil); !errors.Is(err, ErrOutOfOrder) {
			t.Errorf("Commit(round %d) after 3: %v, want ErrOutOfOrder", bad, err)
		}
	}
	rs, err := l.Rounds()
	if err != nil || len(rs) != 3 {
		t.Fatalf("Rounds: %d, %v", len(rs), err)
	}
	for i, r := range rs {
		want := round(i + 1)
		if r.Round != want.Round || r.Epsilon != want.Epsilon || !r.Committed.Equal(want.Committed) || r.ModelSHA256 != protocol.HashHex(want.Model) {
			t.Errorf("round %d read back as %+v", i+1, r)
		}
	}
	w, err := l.Model(2)
	if err != nil || w[0] != 2 {
		t.Fatalf("Model(2) = %v, %v", w, err)
	}
	w0, err := l.Model(0)
	if err != nil || w0[2] != 0.3 {
		t.Fatalf("Model(0) = %v, %v", w0, err)
	}
	ps, err := l.Participation()
	if err != nil || len(ps) != 3 || ps[2].Duration != 3*time.Second {
		t.Fatalf("Participation: %+v, %v", ps, err)
	}
	if err := l.Finish("rounds", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish("budget", time.Now()); err != nil {
		t.Fatal(err)
	}
	if reason, _, _ := l.Finished(); reason != "rounds" {
		t.Errorf("Finished reason %q, want the first one", reason)
	}
	if err := l.Commit(round(4), nil); !errors.Is(err, ErrFinished) {
		t.Errorf("Commit after Finish: %v", err)
	}
	e, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Rounds) != 3 || e.EpsilonSpent != round(3).Epsilon || e.Finished == nil || e.Format != Format {
		t.Errorf("export %+v", e)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Export
	if err := json.Unmarshal(b, &back); err != nil || back.Rounds[1].ModelSHA256 != e.Rounds[1].ModelSHA256 {
		t.Errorf("export JSON round trip: %v", err)
	}
}

func TestAppendOnly(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(round(1), nil); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE rounds SET epsilon = 0`,
		`DELETE FROM rounds`,
		`UPDATE genesis SET noise_multiplier = 100`,
		`DELETE FROM genesis`,
		`INSERT OR REPLACE INTO rounds SELECT * FROM rounds`,
		`INSERT INTO rounds SELECT round + 5, sample_rate, noise_multiplier, epsilon, delta, committed, model, model_sha256 FROM rounds`,
	} {
		if _, err := l.db.Exec(stmt); err == nil {
			t.Errorf("%s succeeded on an append-only ledger", stmt)
		}
	}
	if rs, _ := l.Rounds(); len(rs) != 1 || rs[0].Epsilon != round(1).Epsilon {
		t.Errorf("ledger changed: %+v", rs)
	}
}

func TestCorruptModelDetected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path)
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(round(1), nil); err != nil {
		t.Fatal(err)
	}
	// Bypass the triggers the way an attacker with file access could.
	for _, s := range []string{`DROP TRIGGER rounds_no_update`, `UPDATE rounds SET model = zeroblob(24)`} {
		if _, err := l.db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Model(1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Model of a tampered round: %v, want ErrCorrupt", err)
	}
}

// TestDurableAcrossKill commits rounds in a child process that then kills
// itself with SIGKILL without closing the database: every round whose
// Commit returned must be there when the ledger is reopened.
func TestDurableAcrossKill(t *testing.T) {
	if path := os.Getenv("LEDGER_KILL_CHILD"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("LEDGER_KILL_ROUNDS"))
		l, err := Open(path)
		if err != nil {
			os.Exit(3)
		}
		if err := l.Init(genesis()); err != nil {
			os.Exit(4)
		}
		for i := 1; i <= n; i++ {
			if err := l.Commit(round(i), nil); err != nil {
				os.Exit(5)
			}
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	const n = 5
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurableAcrossKill$")
	cmd.Env = append(os.Environ(), "LEDGER_KILL_CHILD="+path, "LEDGER_KILL_ROUNDS="+strconv.Itoa(n))
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	l := open(t, path)
	rs, err := l.Rounds()
	if err != nil || len(rs) != n {
		t.Fatalf("after SIGKILL the ledger holds %d rounds (%v), want %d", len(rs), err, n)
	}
	for i := 1; i <= n; i++ {
		w, err := l.Model(i)
		if err != nil || w[0] != float64(i) {
			t.Errorf("round %d model %v, %v", i, w, err)
		}
	}
	if err := l.Commit(round(n+1), nil); err != nil {
		t.Errorf("resumed commit: %v", err)
	}
}

func TestScheduleStartOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path)
	if got, err := l.ScheduleStart(); err != nil || !got.IsZero() {
		t.Fatalf("before SetScheduleStart: %v, %v; want zero time", got, err)
	}
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)
	if err := l.SetScheduleStart(t0); err != nil {
		t.Fatal(err)
	}
	// A second call keeps the first t₀: the schedule never moves.
	if err := l.SetScheduleStart(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.Exec(`UPDATE schedule SET start = 'x'`); err == nil {
		t.Error("UPDATE schedule succeeded on an append-only ledger")
	}
	l.Close()
	l = open(t, path)
	if got, err := l.ScheduleStart(); err != nil || !got.Equal(t0) {
		t.Errorf("after reopening: %v, %v; want %v", got, err, t0)
	}
}

// TestExportRoundJSON: the export's round objects keep the names and the
// order of format 1 now that they carry the one privacy event type.
func TestExportRoundJSON(t *testing.T) {
	r := ExportRound{Event: protocol.Event{Round: 2, SampleRate: 0.25, NoiseMultiplier: 1.5, Epsilon: 0.7, Delta: 1e-5, ModelSHA256: "ab"},
		Committed: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Mechanism: protocol.Mechanism{Gamma: 0.5, Sampler: "s"}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"round":2,"sample_rate":0.25,"noise_multiplier":1.5,"epsilon":0.7,"delta":0.00001,"model_sha256":"ab","committed":"2026-01-02T03:04:05Z","gamma":0.5,"sampler":"s"}`
	if string(b) != want {
		t.Fatalf("export round JSON\n got %s\nwant %s", b, want)
	}
	var back ExportRound
	if err := json.Unmarshal([]byte(want), &back); err != nil || back != r {
		t.Fatalf("read back %+v, %v", back, err)
	}
}
