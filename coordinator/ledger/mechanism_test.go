package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestMechanismColumns: γ and the sampler of each round are stored, read
// back and exported; a ledger written before those columns existed opens,
// its old rounds read back with γ = 0 and no sampler (absent from the
// export), and new rounds record theirs.
func TestMechanismColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	// A ledger in the format before the lattice mechanism, with one round.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE rounds (
	round INTEGER PRIMARY KEY, sample_rate REAL NOT NULL, noise_multiplier REAL NOT NULL, epsilon REAL NOT NULL,
	delta REAL NOT NULL, committed TEXT NOT NULL, model BLOB NOT NULL, model_sha256 TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	old := round(1)
	old.ModelSHA256 = protocol.HashHex(old.Model)
	if _, err := db.Exec(`INSERT INTO rounds VALUES (1, 0.25, 4.5, 0.1, 1e-5, ?, ?, ?)`, old.Committed.Format(timeFormat), blob(old.Model), old.ModelSHA256); err != nil {
		t.Fatal(err)
	}
	db.Close()

	l := open(t, path)
	if err := l.Init(genesis()); err != nil {
		t.Fatal(err)
	}
	r2 := round(2)
	r2.Gamma, r2.Sampler = 0x1p-13, "discrete-gaussian-cks2020"
	if err := l.Commit(r2, nil); err != nil {
		t.Fatal(err)
	}
	rs, err := l.Rounds()
	if err != nil || len(rs) != 2 {
		t.Fatalf("Rounds: %v, %v", rs, err)
	}
	if rs[0].Gamma != 0 || rs[0].Sampler != "" {
		t.Errorf("old round read back with γ=%v sampler=%q", rs[0].Gamma, rs[0].Sampler)
	}
	if rs[1].Gamma != 0x1p-13 || rs[1].Sampler != "discrete-gaussian-cks2020" {
		t.Errorf("new round read back with γ=%v sampler=%q", rs[1].Gamma, rs[1].Sampler)
	}
	e, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e.Rounds)
	var raw []map[string]any
	json.Unmarshal(b, &raw)
	if _, ok := raw[0]["gamma"]; ok {
		t.Errorf("old round exported with a gamma: %s", b)
	}
	if raw[1]["gamma"] != 0x1p-13 || raw[1]["sampler"] != "discrete-gaussian-cks2020" {
		t.Errorf("new round exported as %s", b)
	}
	// Reopening an upgraded ledger does not add the columns twice.
	l.Close()
	l2, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	l2.Close()
	if !strings.Contains(string(b), `"sampler":"discrete-gaussian-cks2020"`) {
		t.Errorf("export: %s", b)
	}
}
