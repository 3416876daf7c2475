package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
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
// for every value a study holds (ASCII keys). docs/study-file.md,
// "Study hash", documents it; issue 21 will extend it to the whole study
// value.
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
// CanonicalJSON. With secure aggregation every LHA seals its seed with this
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
