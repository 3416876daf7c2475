package ledger

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Sentinel errors.
var (
	// ErrEmpty: the ledger has no genesis record yet.
	ErrEmpty = errors.New("ledger: no study recorded")
	// ErrExists: Init on a ledger that already holds a study.
	ErrExists = errors.New("ledger: a study is already recorded")
	// ErrOutOfOrder: Commit of a round that does not follow the last one.
	ErrOutOfOrder = errors.New("ledger: round out of order")
	// ErrFinished: Commit after Finish.
	ErrFinished = errors.New("ledger: study finished")
	// ErrCorrupt: a stored model does not match its hash.
	ErrCorrupt = errors.New("ledger: stored model does not match its hash")
)

// Format names the export format.
const Format = "fedcast-ledger/1"

// Round is one committed round: fedcast's privacy event (protocol.Event:
// round, q, c, ε after this round, δ; its ModelSHA256 is set by Commit;
// the ledger does not store Accountant, the study file names it) and the
// round's noise mechanism, with the time and the model.
type Round struct {
	protocol.Event
	protocol.Mechanism
	Committed time.Time
	// Model is the noised global model released for this round (nil when
	// read by Rounds, which leaves the blobs out).
	Model []float64
}

// Participation is the admin-only record of one round.
type Participation = protocol.Participation

// Ledger is an open ledger database. Its methods are safe for concurrent
// use (one connection, serialised).
type Ledger struct {
	db   *sql.DB
	path string
}

const schema = `
CREATE TABLE IF NOT EXISTS genesis (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	study TEXT NOT NULL,
	study_sha256 TEXT NOT NULL,
	noise_multiplier REAL NOT NULL,
	clients INTEGER NOT NULL,
	model BLOB NOT NULL,
	model_sha256 TEXT NOT NULL,
	insecure_seed INTEGER NOT NULL,
	created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
	round INTEGER PRIMARY KEY,
	sample_rate REAL NOT NULL,
	noise_multiplier REAL NOT NULL,
	epsilon REAL NOT NULL,
	delta REAL NOT NULL,
	committed TEXT NOT NULL,
	model BLOB NOT NULL,
	model_sha256 TEXT NOT NULL,
	gamma REAL NOT NULL DEFAULT 0,
	sampler TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS finished (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	reason TEXT NOT NULL,
	at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS participation (
	round INTEGER PRIMARY KEY,
	sampled INTEGER NOT NULL,
	online INTEGER NOT NULL,
	received INTEGER NOT NULL,
	rejected INTEGER NOT NULL,
	duration_ms INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS genesis_no_update BEFORE UPDATE ON genesis BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS genesis_no_delete BEFORE DELETE ON genesis BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS rounds_no_update BEFORE UPDATE ON rounds BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS rounds_no_delete BEFORE DELETE ON rounds BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS rounds_in_order BEFORE INSERT ON rounds
	WHEN NEW.round <> (SELECT coalesce(max(round), 0) + 1 FROM rounds)
	BEGIN SELECT RAISE(ABORT, 'ledger rounds must follow each other'); END;
CREATE TRIGGER IF NOT EXISTS finished_no_update BEFORE UPDATE ON finished BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS finished_no_delete BEFORE DELETE ON finished BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TABLE IF NOT EXISTS schedule (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	start TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS schedule_no_update BEFORE UPDATE ON schedule BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
CREATE TRIGGER IF NOT EXISTS schedule_no_delete BEFORE DELETE ON schedule BEGIN SELECT RAISE(ABORT, 'ledger is append-only'); END;
`

// OpenSQLite opens (creating if needed) the SQLite database at path as
// every append-only ledger of fedcast's wants it (also the helper's,
// coordinator/helper): WAL, synchronous FULL (a commit is on disk when it
// returns), a busy timeout, foreign keys, recursive triggers (so that
// REPLACE fires the delete triggers), immediate transactions, one
// connection.
func OpenSQLite(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "recursive_triggers(1)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Open opens (creating if needed) the ledger database at path.
func Open(path string) (*Ledger, error) {
	db, err := OpenSQLite(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	if err := addMechanismColumns(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	if _, err := db.Exec(releasesSchema + topupsSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		db.Close()
		return nil, fmt.Errorf("ledger: open %s: journal mode %q, want wal (%v)", path, mode, err)
	}
	return &Ledger{db: db, path: path}, nil
}

// addMechanismColumns adds the gamma and sampler columns to a rounds table
// created before they existed (its rounds read back as γ = 0, sampler "").
// Adding a column with a default rewrites no row, so the append-only
// triggers are not involved.
func addMechanismColumns(db *sql.DB) error {
	rows, err := db.Query(`SELECT name FROM pragma_table_info('rounds')`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		have[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range []struct{ name, def string }{{"gamma", "REAL NOT NULL DEFAULT 0"}, {"sampler", "TEXT NOT NULL DEFAULT ''"}} {
		if !have[c.name] {
			if _, err := db.Exec(`ALTER TABLE rounds ADD COLUMN ` + c.name + ` ` + c.def); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the database.
func (l *Ledger) Close() error { return l.db.Close() }

// Path returns the database file.
func (l *Ledger) Path() string { return l.path }

func blob(w []float64) []byte {
	b := make([]byte, 8*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func unblob(b []byte, wantHash string) ([]float64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%w: blob of %d bytes", ErrCorrupt, len(b))
	}
	w := make([]float64, len(b)/8)
	for i := range w {
		w[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	if got := protocol.HashHex(w); got != wantHash {
		return nil, fmt.Errorf("%w: sha256 %s, recorded %s", ErrCorrupt, got, wantHash)
	}
	return w, nil
}

const timeFormat = time.RFC3339Nano

// Init records the study's genesis. It fails with ErrExists if there is one.
func (l *Ledger) Init(g study.Genesis) error {
	if len(g.Model) == 0 {
		return errors.New("ledger: empty initial model")
	}
	tx, err := l.db.Begin()
	if err != nil {
		return fmt.Errorf("ledger: init: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM genesis").Scan(&n); err != nil {
		return fmt.Errorf("ledger: init: %w", err)
	}
	if n > 0 {
		return ErrExists
	}
	_, err = tx.Exec(`INSERT INTO genesis (id, study, study_sha256, noise_multiplier, clients, model, model_sha256, insecure_seed, created)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(g.Study), g.StudySHA256, g.NoiseMultiplier, g.Clients, blob(g.Model), protocol.HashHex(g.Model),
		g.InsecureSeed, g.Created.UTC().Format(timeFormat))
	if err != nil {
		return fmt.Errorf("ledger: init: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ledger: init: %w", err)
	}
	return nil
}

// Genesis reads the genesis record, or returns ErrEmpty.
func (l *Ledger) Genesis() (*study.Genesis, error) {
	var g study.Genesis
	var file, created, modelSHA256 string
	var model []byte
	err := l.db.QueryRow(`SELECT study, study_sha256, noise_multiplier, clients, model, model_sha256, insecure_seed, created FROM genesis WHERE id = 1`).
		Scan(&file, &g.StudySHA256, &g.NoiseMultiplier, &g.Clients, &model, &modelSHA256, &g.InsecureSeed, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: genesis: %w", err)
	}
	g.Study = []byte(file)
	if g.Model, err = unblob(model, modelSHA256); err != nil {
		return nil, err
	}
	if g.Created, err = time.Parse(timeFormat, created); err != nil {
		return nil, fmt.Errorf("ledger: genesis time %q: %w", created, err)
	}
	return &g, nil
}

// Commit durably records round r (event and model) and, if p is not nil, its
// admin-only participation, in one transaction. r.Round must be one more
// than the last committed round. When Commit returns nil the round is on
// disk; only then may its model be released. It sets r.ModelSHA256.
func (l *Ledger) Commit(r *Round, p *Participation) error {
	if len(r.Model) == 0 {
		return errors.New("ledger: commit: empty model")
	}
	r.ModelSHA256 = protocol.HashHex(r.Model)
	tx, err := l.db.Begin()
	if err != nil {
		return fmt.Errorf("ledger: commit round %d: %w", r.Round, err)
	}
	defer tx.Rollback()
	var last, fin, gen int
	// Finished: the current period (after the last top-up, if any) ended.
	if err := tx.QueryRow(`SELECT (SELECT coalesce(max(round), 0) FROM rounds),
		CASE WHEN (SELECT count(*) FROM topups) = 0 THEN (SELECT count(*) FROM finished)
			ELSE (SELECT count(*) FROM refinished WHERE topup = (SELECT max(number) FROM topups)) END,
		(SELECT count(*) FROM genesis)`).Scan(&last, &fin, &gen); err != nil {
		return fmt.Errorf("ledger: commit round %d: %w", r.Round, err)
	}
	switch {
	case gen == 0:
		return ErrEmpty
	case fin > 0:
		return ErrFinished
	case r.Round != last+1:
		return fmt.Errorf("%w: commit of round %d after round %d", ErrOutOfOrder, r.Round, last)
	}
	if _, err := tx.Exec(`INSERT INTO rounds (round, sample_rate, noise_multiplier, epsilon, delta, committed, model, model_sha256, gamma, sampler) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Round, r.SampleRate, r.NoiseMultiplier, r.Epsilon, r.Delta, r.Committed.UTC().Format(timeFormat), blob(r.Model), r.ModelSHA256, r.Gamma, r.Sampler); err != nil {
		return fmt.Errorf("ledger: commit round %d: %w", r.Round, err)
	}
	if p != nil {
		if _, err := tx.Exec(`INSERT INTO participation (round, sampled, online, received, rejected, duration_ms) VALUES (?, ?, ?, ?, ?, ?)`,
			r.Round, p.Sampled, p.Online, p.Received, p.Rejected, p.Duration.Milliseconds()); err != nil {
			return fmt.Errorf("ledger: commit round %d: %w", r.Round, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ledger: commit round %d: %w", r.Round, err)
	}
	return nil
}

// Finish records that the study ended (reason "rounds" or "budget").
// It is idempotent: a second call keeps the first record.
func (l *Ledger) Finish(reason string, at time.Time) error {
	n, err := period(l.db)
	if err != nil {
		return err
	}
	if n == 0 {
		_, err = l.db.Exec(`INSERT OR IGNORE INTO finished (id, reason, at) VALUES (1, ?, ?)`, reason, at.UTC().Format(timeFormat))
	} else {
		_, err = l.db.Exec(`INSERT OR IGNORE INTO refinished (topup, reason, at) VALUES (?, ?, ?)`, n, reason, at.UTC().Format(timeFormat))
	}
	if err != nil {
		return fmt.Errorf("ledger: finish: %w", err)
	}
	return nil
}

// Finished returns the reason the study ended, or "" while it runs.
func (l *Ledger) Finished() (reason string, at time.Time, err error) {
	var s string
	n, err := period(l.db)
	if err != nil {
		return "", time.Time{}, err
	}
	if n == 0 {
		err = l.db.QueryRow(`SELECT reason, at FROM finished WHERE id = 1`).Scan(&reason, &s)
	} else {
		err = l.db.QueryRow(`SELECT reason, at FROM refinished WHERE topup = ?`, n).Scan(&reason, &s)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("ledger: finished: %w", err)
	}
	at, err = time.Parse(timeFormat, s)
	return reason, at, err
}

// SetScheduleStart records t₀, the moment the study's start quorum was
// reached, from which the public round schedule counts. It is idempotent:
// a second call keeps the first record (the schedule never moves).
func (l *Ledger) SetScheduleStart(t time.Time) error {
	_, err := l.db.Exec(`INSERT OR IGNORE INTO schedule (id, start) VALUES (1, ?)`, t.UTC().Format(timeFormat))
	if err != nil {
		return fmt.Errorf("ledger: schedule start: %w", err)
	}
	return nil
}

// ScheduleStart returns t₀ as recorded by SetScheduleStart, or the zero
// time before it.
func (l *Ledger) ScheduleStart() (time.Time, error) {
	var s string
	err := l.db.QueryRow(`SELECT start FROM schedule WHERE id = 1`).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("ledger: schedule start: %w", err)
	}
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("ledger: schedule start %q: %w", s, err)
	}
	return t, nil
}

// Rounds returns every committed round in order, without the model blobs.
func (l *Ledger) Rounds() ([]Round, error) {
	rows, err := l.db.Query(`SELECT round, sample_rate, noise_multiplier, epsilon, delta, committed, model_sha256, gamma, sampler FROM rounds ORDER BY round`)
	if err != nil {
		return nil, fmt.Errorf("ledger: rounds: %w", err)
	}
	defer rows.Close()
	var out []Round
	for rows.Next() {
		var r Round
		var at string
		if err := rows.Scan(&r.Round, &r.SampleRate, &r.NoiseMultiplier, &r.Epsilon, &r.Delta, &at, &r.ModelSHA256, &r.Gamma, &r.Sampler); err != nil {
			return nil, fmt.Errorf("ledger: rounds: %w", err)
		}
		if r.Committed, err = time.Parse(timeFormat, at); err != nil {
			return nil, fmt.Errorf("ledger: round %d time %q: %w", r.Round, at, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Model returns the model committed for round (0 is the initial model),
// checked against its hash.
func (l *Ledger) Model(round int) ([]float64, error) {
	var b []byte
	var h string
	var err error
	if round == 0 {
		err = l.db.QueryRow(`SELECT model, model_sha256 FROM genesis WHERE id = 1`).Scan(&b, &h)
	} else {
		err = l.db.QueryRow(`SELECT model, model_sha256 FROM rounds WHERE round = ?`, round).Scan(&b, &h)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("ledger: no model for round %d", round)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: model of round %d: %w", round, err)
	}
	return unblob(b, h)
}

// Participation returns the admin-only per-round records in round order.
func (l *Ledger) Participation() ([]Participation, error) {
	rows, err := l.db.Query(`SELECT round, sampled, online, received, rejected, duration_ms FROM participation ORDER BY round`)
	if err != nil {
		return nil, fmt.Errorf("ledger: participation: %w", err)
	}
	defer rows.Close()
	var out []Participation
	for rows.Next() {
		var p Participation
		var ms int64
		if err := rows.Scan(&p.Round, &p.Sampled, &p.Online, &p.Received, &p.Rejected, &ms); err != nil {
			return nil, fmt.Errorf("ledger: participation: %w", err)
		}
		p.Duration = time.Duration(ms) * time.Millisecond
		out = append(out, p)
	}
	return out, rows.Err()
}

// Export is the ledger in JSON form.
type Export struct {
	Format             string          `json:"format"`
	Study              json.RawMessage `json:"study"`
	StudySHA256        string          `json:"study_sha256"`
	Clients            int             `json:"clients"`
	NoiseMultiplier    float64         `json:"noise_multiplier"`
	InitialModelSHA256 string          `json:"initial_model_sha256"`
	InsecureSeed       bool            `json:"insecure_seed"`
	Created            time.Time       `json:"created"`
	Rounds             []ExportRound   `json:"rounds"`
	EpsilonSpent       float64         `json:"epsilon_spent"`
	// Accountant is the study file's privacy accountant, which computed
	// every round's ε ("rdp" when the file names none).
	Accountant string          `json:"accountant"`
	Finished   *ExportFinished `json:"finished"`
	// TopUps are the raises of the lifetime budget (protocol.TopUp), in
	// order; absent when there were none. EpsilonSpent counts the rounds
	// they added.
	TopUps []protocol.TopUp `json:"top_ups,omitempty"`
}

// ExportRound is one round's privacy event (with its model hash), the
// time it was committed and its noise mechanism (gamma and sampler, absent
// for non-DP rounds and rounds recorded before the lattice mechanism). Its
// JSON is that of the export since format 1: round, sample_rate,
// noise_multiplier, epsilon, delta, model_sha256, committed, gamma,
// sampler.
type ExportRound struct {
	protocol.Event
	// Campaign is the round's campaign (1-based) in a continuing study
	// (the study file's campaigns > 1); absent otherwise.
	Campaign  int       `json:"campaign,omitempty"`
	Committed time.Time `json:"committed"`
	protocol.Mechanism
	// Rereleased marks a round committed before a crash of the
	// coordinator and released after its restart, at the first slot (the
	// committed model, unchanged). Absent for every other round.
	Rereleased bool `json:"rereleased,omitempty"`
	// SecureAggregation is true in a study with a helper (two-server
	// secure aggregation): Epsilon is then each server's ε, and
	// EpsilonPublic the public's (secure.go). Absent otherwise.
	SecureAggregation bool     `json:"secure_aggregation,omitempty"`
	EpsilonPublic     *float64 `json:"epsilon_public,omitempty"`
}

// ExportFinished says why and when the study ended.
type ExportFinished struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Export reads the whole ledger (without model blobs and participation).
func (l *Ledger) Export(ctx context.Context) (*Export, error) {
	g, err := l.Genesis()
	if err != nil {
		return nil, err
	}
	rs, err := l.Rounds()
	if err != nil {
		return nil, err
	}
	e := &Export{
		Format: Format, Study: g.Study, StudySHA256: g.StudySHA256, Clients: g.Clients,
		NoiseMultiplier: g.NoiseMultiplier, InitialModelSHA256: protocol.HashHex(g.Model),
		InsecureSeed: g.InsecureSeed, Created: g.Created, Rounds: []ExportRound{},
		Accountant: "rdp",
	}
	var acct struct {
		Accountant string `json:"accountant"`
		Rounds     int    `json:"rounds"`
		Campaigns  int    `json:"campaigns"`
	}
	if json.Unmarshal(g.Study, &acct) == nil && acct.Accountant != "" {
		e.Accountant = acct.Accountant
	}
	again, err := l.Rereleased()
	if err != nil {
		return nil, err
	}
	// A continuing study: the campaign of each round, from the public
	// schedule (protocol.Study.CampaignOf).
	sched := protocol.Study{Settings: protocol.Settings{Rounds: acct.Rounds, Campaigns: acct.Campaigns}}
	for _, r := range rs {
		x := ExportRound{Event: r.Event, Committed: r.Committed, Mechanism: r.Mechanism,
			Rereleased: slices.Contains(again, r.Round)}
		if acct.Campaigns > 1 {
			x.Campaign, _ = sched.CampaignOf(r.Round)
		}
		e.Rounds = append(e.Rounds, x)
		e.EpsilonSpent = r.Epsilon
	}
	if err := secureRounds(e); err != nil {
		return nil, err
	}
	reason, at, err := l.Finished()
	if err != nil {
		return nil, err
	}
	if reason != "" {
		e.Finished = &ExportFinished{Reason: reason, At: at}
	}
	if e.TopUps, err = l.TopUps(); err != nil {
		return nil, err
	}
	return e, ctx.Err()
}
