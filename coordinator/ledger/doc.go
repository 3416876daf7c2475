// Package ledger is a study's append-only privacy ledger: an SQLite database
// (modernc.org/sqlite, pure Go) holding the study's genesis record and, for
// every committed round, its privacy event and the noised model. It is
// serve's study.Store ([Ledger.Store]): the genesis record is the study
// package's study.Genesis, and Load rebuilds the engine's study.State from
// the rows.
//
// # Release once
//
// The coordinator calls [Ledger.Commit] for a round before it sends that
// round's model to anyone. Commit writes the event (round, q, c, ε after the
// round, δ, time) and the model (8n little-endian float64 bytes and their
// SHA-256, the hash of protocol.HashWeights) in one transaction, and returns
// only once SQLite has synced it (WAL journal, synchronous=FULL). After a
// crash the study state is rebuilt from the ledger: the last committed model
// is the global model, ε follows from the events, and the committed model is
// re-sent unchanged; a committed round is never computed again.
//
// Rows are never changed or deleted: triggers abort any UPDATE or DELETE on
// the genesis and rounds tables, and Commit refuses a round that does not
// follow the last one.
//
// # Admin-only data
//
// Who took part is admin-only (spec §5). Per-round participation (sampled,
// received, duration) lives in a separate table that [Ledger.Export] leaves
// out; [Ledger.Participation] reads it for the admin dashboard.
//
// # Export
//
// [Ledger.Export] returns the ledger as JSON-ready [Export]: the study, the
// calibrated noise multiplier, the initial model's hash and every round's
// event with its model hash, so anyone holding the released models can check
// them against it.
package ledger
