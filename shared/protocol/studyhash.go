package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedcast/fedcast/shared/secagg"
)

// Helper names the helper server of a study with two-server secure
// aggregation: where the leader reaches it, and the HPKE public key the
// LHAs seal their seeds to (shared/secagg).
type Helper struct {
	// URL is the helper's base URL (the leader forwards to it).
	URL string `json:"url"`
	// PublicKey is the helper's X25519 public key (32 bytes; base64 in
	// JSON). Its fingerprint (secagg.PublicKey.Fingerprint) is what people
	// compare.
	PublicKey []byte `json:"public_key"`
	// Operator names the organisation that runs the helper, for people.
	Operator string `json:"operator,omitempty"`
	// LeaderOperator names the organisation that runs the coordinator
	// (the leader), for people; the page shows both operators.
	LeaderOperator string `json:"leader_operator,omitempty"`
	// LeaderTokenSHA256 is the hex SHA-256 of the leader token, a secret
	// only the study's coordinator (the leader) holds: the helper serves a
	// round of this study only to a request that carries the token
	// (HelperRequest.LeaderToken). Because it is part of the study value,
	// whose hash the LHAs seal their seeds under, nobody else can put a
	// token of their own in its place for this study.
	LeaderTokenSHA256 string `json:"leader_token_sha256,omitempty"`
}

// studyHashPrefix separates the study hash from every other SHA-256 use.
const studyHashPrefix = "fedcast study v1\n"

// CanonicalJSON returns the canonical encoding of the study's public
// parameters, which Hash hashes: the study's JSON (field names as on the
// wire, empty optional fields left out) with every object's keys sorted
// bytewise, no whitespace, numbers in their shortest round-trip form
// (ECMAScript Number-to-String: 0.00001, 1e-7, 1e+21), strings escaped as
// JSON requires and nothing else (no HTML escaping), byte strings in
// standard base64. This is the JSON Canonicalization Scheme (RFC 8785)
// for every value a study holds (ASCII keys). It covers the whole value:
// every field of Study (a test changes each field by reflection and
// checks that the hash changes). docs/study-file.md, "Study hash",
// documents it.
func (s *Study) CanonicalJSON() ([]byte, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("protocol: study: canonical encoding: %w", err)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // keep encoding/json's shortest float form as written
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("protocol: study: canonical encoding: %w", err)
	}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil { // map keys come out sorted
		return nil, fmt.Errorf("protocol: study: canonical encoding: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// Hash returns the study hash: SHA-256 of "fedcast study v1\n" followed by
// CanonicalJSON. It is the study's identity: two study values are the same
// study exactly when their hashes are equal (an LHA compares the study of
// every welcome with the one it agreed to by it, a top-up names the study
// it raises by it, the ledger and the page show it). With secure aggregation every LHA seals its seed with this
// hash as associated data, and the helper takes σ, γ, B, the round cap and
// the budget only from a study value with the same hash: a leader that
// changes any public parameter makes every seed fail to open.
func (s *Study) Hash() ([32]byte, error) {
	c, err := s.CanonicalJSON()
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	h.Write([]byte(studyHashPrefix))
	h.Write(c)
	var out [32]byte
	h.Sum(out[:0])
	return out, nil
}

// ID returns the study hash in lowercase hex: the study's identity as
// people and records see it. A study value that cannot be encoded (a
// non-finite number, which Validate and Decode refuse) has the ID "".
func (s *Study) ID() string {
	h, err := s.Hash()
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h[:])
}

// HelperRequest is what the leader sends the helper to aggregate one
// round (POST /helper/v1/aggregate): the study value the LHAs sealed
// their seeds under (the helper takes every parameter from it and checks
// its hash by opening the seeds), the round, and each report's ID and
// sealed seed.
type HelperRequest struct {
	// LeaderToken is the secret whose SHA-256 the study names
	// (Helper.LeaderTokenSHA256): it shows the helper that the request
	// comes from the study's coordinator.
	LeaderToken string          `json:"leader_token"`
	Study       Study           `json:"study"`
	Round       int             `json:"round"`
	Reports     []secagg.Sealed `json:"reports"`
}

// HelperResponse is the helper's aggregate share of one round.
type HelperResponse struct {
	// StudySHA256 is the hex study hash the helper aggregated under.
	StudySHA256 string `json:"study_sha256"`
	Round       int    `json:"round"`
	// Kept lists the reports in the helper's sum, in order: the leader
	// sums its shares of exactly these (the intersection).
	Kept []secagg.ReportID `json:"kept"`
	// Rejected counts the reports left out (seed did not open, second
	// report of an LHA, LHA number outside the study).
	Rejected int `json:"rejected"`
	// Share is the aggregate share, secagg.MarshalShare (base64 in JSON).
	Share []byte `json:"share"`
	// Epsilon is the helper's own per-server ε after this round.
	Epsilon float64 `json:"epsilon"`
	// Repeated is true when the helper answers a retry of a round it had
	// already released with the stored, identical share.
	Repeated bool `json:"repeated,omitempty"`
}

// HelperError is the body of a helper's refusal, in words for the
// operators.
type HelperError struct {
	Error string `json:"error"`
}

// CheckSecureAggregation says whether the study can run with a helper
// (two-server secure aggregation): the strategy must sum the LHAs' updates
// (FedAvg and MR-MTL, with or without local DP-SGD; cyclic hands the
// model from LHA to LHA and is not a sum), every server must add
// client-level noise (not privacy "example" alone), the helper's public
// key must be a key, and the sums must not wrap around ℤ_{2^64} for N LHAs
// at every round's noise multiplier (secagg.CheckStudy). Noise schedules
// are supported: round t is encoded and noised with c_t.
func (s *Study) CheckSecureAggregation() error {
	if s.Helper == nil {
		return errors.New("protocol: study: no helper is named")
	}
	if _, err := secagg.ParsePublicKey(s.Helper.PublicKey); err != nil {
		return fmt.Errorf("protocol: study: helper: %w", err)
	}
	if _, err := s.StrategyKind(); err != nil {
		return fmt.Errorf("protocol: study: %w", err)
	}
	if s.Sequential() {
		return fmt.Errorf("protocol: study: strategy %q cannot use a helper: it hands the model from LHA to LHA, "+
			"so there is no sum to split between two servers; use fedavg or mrmtl, or leave out the helper", s.Strategy)
	}
	if !s.ClientLevelDP() {
		return errors.New("protocol: study: privacy \"example\" cannot use a helper: secure aggregation needs client-level " +
			"noise from both servers; use privacy \"client\" or \"both\", or leave out the helper")
	}
	cs := []float64{s.NoiseMultiplier}
	if len(s.NoiseMultipliers) > 0 {
		cs = s.NoiseMultipliers
	}
	if err := secagg.CheckStudy(s.Clients, s.ClipNorm, cs...); err != nil {
		return fmt.Errorf("protocol: study: %w", err)
	}
	return nil
}
