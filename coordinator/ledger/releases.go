package ledger

import (
	"database/sql"
	"fmt"
	"time"
)

// Releases. A round is committed before it is released (sent to the LHAs);
// the releases table records each release, so that a restart finds a round
// committed before a crash and never released, releases it at the next
// slot and records it as a re-release (study.ReleaseRecorder). Rounds
// committed before a ledger had this table count as released
// (release_tracking.after).
const releasesSchema = `
CREATE TABLE IF NOT EXISTS releases (
	round INTEGER PRIMARY KEY,
	at TEXT NOT NULL,
	rereleased INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS release_tracking (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	after INTEGER NOT NULL
);
INSERT OR IGNORE INTO release_tracking (id, after) SELECT 1, coalesce(max(round), 0) FROM rounds;
CREATE TRIGGER IF NOT EXISTS releases_no_update BEFORE UPDATE ON releases BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS releases_no_delete BEFORE DELETE ON releases BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS release_tracking_no_update BEFORE UPDATE ON release_tracking BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS release_tracking_no_delete BEFORE DELETE ON release_tracking BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
`

// Release records that committed round was released at at; rereleased
// marks a release after a restart. Recording a round again is a no-op.
func (l *Ledger) Release(round int, at time.Time, rereleased bool) error {
	var n int
	if err := l.db.QueryRow(`SELECT count(*) FROM rounds WHERE round = ?`, round).Scan(&n); err != nil {
		return fmt.Errorf("ledger: release of round %d: %w", round, err)
	}
	if n == 0 {
		return fmt.Errorf("ledger: release of round %d, which is not committed", round)
	}
	if _, err := l.db.Exec(`INSERT OR IGNORE INTO releases (round, at, rereleased) VALUES (?, ?, ?)`,
		round, at.UTC().Format(timeFormat), rereleased); err != nil {
		return fmt.Errorf("ledger: release of round %d: %w", round, err)
	}
	return nil
}

// LastReleased returns the last round known to be released: the largest
// recorded release, or a round committed before releases were recorded.
func (l *Ledger) LastReleased() (int, error) {
	var after int
	var last sql.NullInt64
	if err := l.db.QueryRow(`SELECT after FROM release_tracking WHERE id = 1`).Scan(&after); err != nil {
		return 0, fmt.Errorf("ledger: releases: %w", err)
	}
	if err := l.db.QueryRow(`SELECT max(round) FROM releases`).Scan(&last); err != nil {
		return 0, fmt.Errorf("ledger: releases: %w", err)
	}
	return max(after, int(last.Int64)), nil
}

// Rereleased returns the rounds released after a restart, in order.
func (l *Ledger) Rereleased() ([]int, error) {
	rows, err := l.db.Query(`SELECT round FROM releases WHERE rereleased <> 0 ORDER BY round`)
	if err != nil {
		return nil, fmt.Errorf("ledger: releases: %w", err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var r int
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("ledger: releases: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
