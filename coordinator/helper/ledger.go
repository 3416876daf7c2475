package helper

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// LedgerFormat names the helper ledger's export format.
const LedgerFormat = "fedcast-helper-ledger/1"

const ledgerSchema = `
CREATE TABLE IF NOT EXISTS study (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	study_sha256 TEXT NOT NULL,
	study TEXT NOT NULL,
	created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS releases (
	round INTEGER PRIMARY KEY,
	request_sha256 TEXT NOT NULL,
	kept TEXT NOT NULL,
	rejected INTEGER NOT NULL,
	share BLOB NOT NULL,
	share_sha256 TEXT NOT NULL,
	sample_rate REAL NOT NULL,
	noise_multiplier REAL NOT NULL,
	epsilon REAL NOT NULL,
	delta REAL NOT NULL,
	released TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS study_no_update BEFORE UPDATE ON study BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS study_no_delete BEFORE DELETE ON study BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS releases_no_update BEFORE UPDATE ON releases BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS releases_no_delete BEFORE DELETE ON releases BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS releases_in_order BEFORE INSERT ON releases
	WHEN NEW.round <> (SELECT coalesce(max(round), 0) + 1 FROM releases)
	BEGIN SELECT RAISE(ABORT, 'helper ledger rounds must follow each other'); END;
`

// A Ledger is the helper's append-only record of one study (one SQLite
// file per study hash under the state directory): the study value and one
// row per released aggregate share. A share is committed before it is
// released, and a round is never committed twice.
type Ledger struct {
	db   *sql.DB
	hash string
}

// ledgerFile returns the ledger path of the study with hex hash h.
func ledgerFile(dir, h string) string { return filepath.Join(dir, "study-"+h+".db") }

// openLedger opens (creating if needed) the ledger of the study with hex
// hash h in dir.
func openLedger(dir, h string) (*Ledger, error) {
	path := ledgerFile(dir, h)
	db, err := ledger.OpenSQLite(path)
	if err != nil {
		return nil, fmt.Errorf("helper: ledger %s: %w", path, err)
	}
	if _, err := db.Exec(ledgerSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("helper: ledger %s: %w", path, err)
	}
	return &Ledger{db: db, hash: h}, nil
}

// Close closes the database.
func (l *Ledger) Close() error { return l.db.Close() }

// init records the study value once; a ledger holding another study's
// value is refused.
func (l *Ledger) init(study []byte, now time.Time) error {
	var h string
	err := l.db.QueryRow(`SELECT study_sha256 FROM study WHERE id = 1`).Scan(&h)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = l.db.Exec(`INSERT INTO study (id, study_sha256, study, created) VALUES (1, ?, ?, ?)`,
			l.hash, string(study), now.UTC().Format(time.RFC3339Nano))
		return err
	case err != nil:
		return err
	case h != l.hash:
		return fmt.Errorf("helper: ledger of study %s holds study %s", l.hash, h)
	}
	return nil
}

// Release is one released aggregate share as recorded.
type Release struct {
	Round           int               `json:"round"`
	Reports         int               `json:"reports"`
	Rejected        int               `json:"rejected"`
	SampleRate      float64           `json:"sample_rate"`
	NoiseMultiplier float64           `json:"noise_multiplier"`
	Epsilon         float64           `json:"epsilon"`
	Delta           float64           `json:"delta"`
	ShareSHA256     string            `json:"share_sha256"`
	Released        time.Time         `json:"released"`
	Kept            []secagg.ReportID `json:"-"`
	Share           []byte            `json:"-"`
	RequestSHA256   string            `json:"-"`
}

// commit durably records r; only then may its share leave the helper.
func (l *Ledger) commit(r *Release) error {
	kept, _ := json.Marshal(r.Kept)
	sum := sha256.Sum256(r.Share)
	r.ShareSHA256 = hex.EncodeToString(sum[:])
	_, err := l.db.Exec(`INSERT INTO releases (round, request_sha256, kept, rejected, share, share_sha256,
		sample_rate, noise_multiplier, epsilon, delta, released) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Round, r.RequestSHA256, string(kept), r.Rejected, r.Share, r.ShareSHA256,
		r.SampleRate, r.NoiseMultiplier, r.Epsilon, r.Delta, r.Released.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("helper: committing round %d: %w", r.Round, err)
	}
	return nil
}

// releases returns every release in round order (with shares when
// withShares).
func (l *Ledger) releases(withShares bool) ([]Release, error) {
	rows, err := l.db.Query(`SELECT round, request_sha256, kept, rejected, share, share_sha256, sample_rate,
		noise_multiplier, epsilon, delta, released FROM releases ORDER BY round`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Release
	for rows.Next() {
		var r Release
		var kept, at string
		if err := rows.Scan(&r.Round, &r.RequestSHA256, &kept, &r.Rejected, &r.Share, &r.ShareSHA256,
			&r.SampleRate, &r.NoiseMultiplier, &r.Epsilon, &r.Delta, &at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(kept), &r.Kept); err != nil {
			return nil, fmt.Errorf("helper: ledger round %d: %w", r.Round, err)
		}
		r.Reports = len(r.Kept)
		r.Released, _ = time.Parse(time.RFC3339Nano, at)
		if sum := sha256.Sum256(r.Share); hex.EncodeToString(sum[:]) != r.ShareSHA256 {
			return nil, fmt.Errorf("helper: ledger round %d: stored share does not match its hash", r.Round)
		}
		if !withShares {
			r.Share = nil
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Export is a helper ledger in JSON form (`fedcast ledger export --state
// HELPER_DIR`): the study value and hash, and one entry per released
// aggregate share.
type Export struct {
	Format       string          `json:"format"`
	StudySHA256  string          `json:"study_sha256"`
	Study        json.RawMessage `json:"study"`
	Created      time.Time       `json:"created"`
	Rounds       []Release       `json:"rounds"`
	EpsilonSpent float64         `json:"epsilon_spent"`
}

// export reads the ledger.
func (l *Ledger) export() (*Export, error) {
	e := &Export{Format: LedgerFormat, Rounds: []Release{}}
	var study, at string
	if err := l.db.QueryRow(`SELECT study_sha256, study, created FROM study WHERE id = 1`).Scan(&e.StudySHA256, &study, &at); err != nil {
		return nil, fmt.Errorf("helper: ledger %s: no study recorded (%w)", l.hash, err)
	}
	e.Study = json.RawMessage(study)
	e.Created, _ = time.Parse(time.RFC3339Nano, at)
	rs, err := l.releases(false)
	if err != nil {
		return nil, err
	}
	e.Rounds = append(e.Rounds, rs...)
	if len(rs) > 0 {
		e.EpsilonSpent = rs[len(rs)-1].Epsilon
	}
	return e, nil
}

// Studies returns the hex hashes of the studies with a ledger in the
// helper state directory dir, sorted.
func Studies(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "study-*.db"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range m {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "study-"), ".db"))
	}
	sort.Strings(out)
	return out, nil
}

// ExportLedger reads the ledger of the study with hex hash study in the
// helper state directory dir; with study empty, the directory must hold
// exactly one study.
func ExportLedger(dir, study string) (*Export, error) {
	hs, err := Studies(dir)
	if err != nil {
		return nil, err
	}
	if study == "" {
		switch len(hs) {
		case 0:
			return nil, fmt.Errorf("helper: %s holds no study ledger (is it the helper's --state directory?)", dir)
		case 1:
			study = hs[0]
		default:
			return nil, fmt.Errorf("helper: %s holds %d studies (%s): name one with --study", dir, len(hs), strings.Join(hs, ", "))
		}
	}
	if _, err := os.Stat(ledgerFile(dir, study)); err != nil {
		return nil, fmt.Errorf("helper: no ledger of study %s in %s", study, dir)
	}
	l, err := openLedger(dir, study)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.export()
}

// requestDigest is the hex SHA-256 of a request's round and reports in
// order: a retry of the same request has the same digest.
func requestDigest(req *protocol.HelperRequest) string {
	h := sha256.New()
	fmt.Fprintf(h, "round %d\n", req.Round)
	for _, r := range req.Reports {
		h.Write(r.ID[:])
		h.Write(r.SealedSeed)
	}
	return hex.EncodeToString(h.Sum(nil))
}
