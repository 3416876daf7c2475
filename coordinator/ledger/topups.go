package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Top-ups (protocol.TopUp). Each raise of the lifetime budget is a row of
// the append-only topups table, holding its public record as JSON. A
// top-up opens a new period of the study: the study is finished when the
// current period's end is recorded, in the finished table for the period
// before any top-up (as ledgers without top-ups always did), in
// refinished for the period that top-up n opened.
const topupsSchema = `
CREATE TABLE IF NOT EXISTS topups (
	number INTEGER PRIMARY KEY,
	at TEXT NOT NULL,
	record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refinished (
	topup INTEGER PRIMARY KEY REFERENCES topups(number),
	reason TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS topups_in_order BEFORE INSERT ON topups
	WHEN NEW.number <> (SELECT coalesce(max(number), 0) + 1 FROM topups)
	BEGIN SELECT RAISE(ABORT, 'ledger top-ups must follow each other'); END;
CREATE TRIGGER IF NOT EXISTS topups_no_update BEFORE UPDATE ON topups BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS topups_no_delete BEFORE DELETE ON topups BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS refinished_no_update BEFORE UPDATE ON refinished BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS refinished_no_delete BEFORE DELETE ON refinished BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
`

// TopUp records top-up t, the next one. Recording the same top-up again
// is a no-op; another top-up under a recorded number is an error.
func (l *Ledger) TopUp(t protocol.TopUp) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("ledger: top-up %d: %w", t.Number, err)
	}
	var old string
	err = l.db.QueryRow(`SELECT record FROM topups WHERE number = ?`, t.Number).Scan(&old)
	switch {
	case err == nil && old == string(b):
		return nil
	case err == nil:
		return fmt.Errorf("%w: top-up %d is already recorded with other values", ErrOutOfOrder, t.Number)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("ledger: top-up %d: %w", t.Number, err)
	}
	if _, err := l.db.Exec(`INSERT INTO topups (number, at, record) VALUES (?, ?, ?)`, t.Number, t.At.UTC().Format(timeFormat), string(b)); err != nil {
		return fmt.Errorf("ledger: top-up %d: %w", t.Number, err)
	}
	return nil
}

// TopUps returns the recorded top-ups in order.
func (l *Ledger) TopUps() ([]protocol.TopUp, error) {
	rows, err := l.db.Query(`SELECT record FROM topups ORDER BY number`)
	if err != nil {
		return nil, fmt.Errorf("ledger: top-ups: %w", err)
	}
	defer rows.Close()
	var out []protocol.TopUp
	for rows.Next() {
		var s string
		var t protocol.TopUp
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("ledger: top-ups: %w", err)
		}
		if err := json.Unmarshal([]byte(s), &t); err != nil {
			return nil, fmt.Errorf("ledger: top-up %d: %w", len(out)+1, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// period returns the number of the last top-up (0: none).
func period(q interface {
	QueryRow(string, ...any) *sql.Row
}) (int, error) {
	var n int
	if err := q.QueryRow(`SELECT coalesce(max(number), 0) FROM topups`).Scan(&n); err != nil {
		return 0, fmt.Errorf("ledger: top-ups: %w", err)
	}
	return n, nil
}
