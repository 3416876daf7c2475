// Package protocol is the versioned wire protocol between the fedcast
// coordinator and its clients (the native `fedcast client` and the browser).
// It only turns messages into bytes and back: it opens no sockets, so the
// same code runs in the coordinator, natively and in js/wasm.
//
// # Frames
//
// Every message is one websocket frame. Control messages are JSON objects in
// text frames; weight vectors (the global model and clipped updates) travel
// in binary frames. [Encode] returns the frame's [Kind] and bytes, [Decode]
// reads them back; Decode never panics and rejects anything malformed with an
// error wrapping [ErrMalformed], [ErrVersion], [ErrTooLarge] or
// [ErrNotFinite].
//
// Text frame: a JSON object with the protocol version and the type first,
//
//	{"v":1,"type":"welcome","study":{…},…}
//
// Binary frame (all integers little-endian):
//
//	offset  size  field
//	0       2     magic "fc" (0x66 0x63)
//	2       1     protocol version (1)
//	3       1     message type (3 round_start, 4 update, 6 round_result)
//	4       4     round id, uint32
//	8       4     n, number of weights, uint32
//	12      4     L, length of the metadata, uint32 (≤ MaxMeta)
//	16      32    SHA-256 of the 8n weight bytes (see [HashWeights])
//	48      L     metadata: a JSON object (type-specific: round_start
//	              {"time_left_ms":…,"picked":0|1}; update exactly
//	              {"dummy":0} or {"dummy":1}, the same length either way)
//	48+L    8n    weights, IEEE-754 float64, little-endian
//
// The weight hash is the same one the coordinator's privacy ledger stores
// for each released model, so a client can check every model it receives
// against the ledger export. Weights must be finite.
//
// # Messages
//
//	type          dir   frame   content
//	hello         c→s   text    token (no longer sent: the token travels in
//	                            the handshake, see below)
//	welcome       s→c   text    public study parameters, the LHA's name, the
//	                            study state and the round log (privacy events);
//	                            the coordinator's first frame
//	round_start   s→c   binary  round id, time left, picked (0 or 1), global
//	                            weights; sent to every online and ready LHA
//	update        c→s   binary  round id, dummy (0 or 1) and the clipped Δw
//	                            (a dummy: zeros of the same length); every LHA
//	                            answers every round_start once
//	accepted      s→c   text    round id of an update the coordinator took
//	round_result  s→c   binary  the round's privacy event (round, q, c, ε
//	                            after it, δ) and the new global weights; to all
//	finished      s→c   text    rounds completed, final ε, reason, model hash
//	error         s→c   text    code (table below), message, round
//	ready (9)     c→s   text    nothing: the LHA's file is chosen and checked
//	                            and it joined; only now does it count towards
//	                            the start quorum and get round_start
//	report (10)   c→s   binary  a study with a helper (two-server secure
//	                            aggregation, shared/secagg): instead of update,
//	                            every LHA answers every round with one report,
//	                            a sharing of its encoded update or of zero
//	                            (payload: the secagg report, 8·d + 112 bytes;
//	                            no metadata); the welcome then carries the
//	                            LHA's number (index), which report IDs carry
//
// A client sends two kinds of message: ready (once per connection, when
// its file is chosen and checked and it joined) and update (real or
// dummy). No client message carries its number of rows or any other
// statistic of its data; ready depends only on a file having been chosen
// and parsed, never on what it holds.
//
// # Handshake
//
// The join token is checked before the websocket upgrade: a client offers
// the subprotocols [Subprotocols] (token) — [Subprotocol] and
// [AuthPrefix] + base64url(token) — and the coordinator selects
// Subprotocol ([ParseAuth]). A refused handshake gets an error frame and
// an immediate close (or HTTP 429 past the limit of failed attempts).
//
// # Trust model (spec §5)
//
// Who was sampled, how many, and round timings are admin-only. Every
// online and ready LHA gets the same round_start every round (only its one-digit
// picked field differs, inside the encrypted channel) and answers it once,
// [AnswerAfter] its arrival, with its update if picked and trained in time,
// else a dummy of the same size: an observer of the frames' sizes and times
// cannot tell who was picked. After a reconnect a client may get the same
// round_start again (same weights) until it has answered; a round_result
// for a round it already has must carry the same model hash (release once:
// a committed round is never re-noised).
//
// # Error codes
//
//	code  name             meaning                                        connection
//	1     bad_frame        malformed frame or JSON, wrong kind for type   closed
//	2     version          unsupported protocol version                   closed
//	3     unauthorized     missing or unknown join token                  closed
//	4     replaced         another connection joined with the same token  closed
//	5     not_sampled      (no longer sent: such an update is dropped
//	                       without an answer, like a dummy)               kept
//	6     stale_round      update for a round that is not open (replayed,
//	                       late or unknown round id)                      kept
//	7     duplicate_update a second update for the same round             kept
//	8     bad_update       wrong length, NaN or ±Inf weights              kept
//	9     too_large        frame over the size limit                      closed
//	10    finished         the study has ended; no more rounds            kept
//	11    internal         coordinator error; try again later             closed
//	12    hello_expected   a hello frame on a joined connection           closed
//	13    round_abandoned  the round was abandoned (with a helper: no share
//	                       from the helper); nothing released, no budget
//	                       spent; the round opens again                   kept
//
// # Size limits
//
// [MaxText] bounds a text frame, [MaxMeta] the metadata of a binary frame and
// [MaxWeights] the weight count; [FrameSize] gives the exact size of a binary
// frame for a model size, which the coordinator uses as its websocket read
// limit.
package protocol
