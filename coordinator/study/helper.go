package study

import (
	"fmt"
	"strings"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// HelperRef names a study's helper server (two-server secure aggregation,
// shared/secagg): `study new --helper URL --helper-key PUBFILE` writes it.
type HelperRef struct {
	// URL is the helper's base URL, which the coordinator posts each
	// round's sealed seeds to. Required.
	URL string `json:"url"`
	// PublicKey is the helper's X25519 public key (base64 in the file),
	// from its helper.pub. Required.
	PublicKey []byte `json:"public_key"`
	// Fingerprint is the key's fingerprint as the helper printed it; it
	// must match the key. Written by `study new` for people to compare.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Operator names the organisation that runs the helper (shown to the
	// LHAs). Optional.
	Operator string `json:"operator,omitempty"`
	// LeaderOperator names the organisation that runs the coordinator
	// (shown to the LHAs beside the helper's). Optional.
	LeaderOperator string `json:"leader_operator,omitempty"`
	// LeaderToken is the secret the coordinator shows the helper with each
	// round's request; the study value sent to everyone names only its
	// SHA-256 (protocol.Helper.LeaderTokenSHA256), so only the holder of
	// this file can make the helper spend the study's rounds. Create makes
	// it. Required: it makes the study file a secret (mode 0600).
	LeaderToken string `json:"leader_token"`
}

// minLeaderToken is the shortest leader token accepted: NewToken's 43
// characters carry 256 bits.
const minLeaderToken = 32

// public is the helper as sent to the LHAs (nil without one).
func (h *HelperRef) public() *protocol.Helper {
	if h == nil {
		return nil
	}
	return &protocol.Helper{URL: h.URL, PublicKey: h.PublicKey, Operator: h.Operator, LeaderOperator: h.LeaderOperator, LeaderTokenSHA256: HashToken(h.LeaderToken)}
}

// validateHelper checks the helper field: a URL, a key with a matching
// fingerprint, and a strategy and privacy level that secure aggregation
// supports (protocol.Study.CheckSecureAggregation repeats the last two
// with the calibrated noise, and checks wrap-around: CheckHelper).
func (f *File) validateHelper() error {
	h := f.Helper
	if h == nil {
		return nil
	}
	if !validHelperURL(h.URL) {
		return configErr("helper.url is %q, want the helper's http:// or https:// address", h.URL)
	}
	pk, err := secagg.ParsePublicKey(h.PublicKey)
	if err != nil {
		return configErr("helper.public_key: %v (copy it from the helper's helper.pub)", err)
	}
	if h.Fingerprint != "" && h.Fingerprint != pk.Fingerprint() {
		return configErr("helper.fingerprint is %q but the key's fingerprint is %q", h.Fingerprint, pk.Fingerprint())
	}
	if len(h.LeaderToken) < minLeaderToken {
		return configErr("helper.leader_token is %d characters, want a secret of at least %d "+
			"(fedcast study new --helper makes one; without it the helper serves no round)", len(h.LeaderToken), minLeaderToken)
	}
	if f.Sequential() {
		return configErr("strategy %q cannot use a helper: it hands the model from LHA to LHA, so there is no sum to split between two servers; use fedavg or mrmtl, or leave out the helper", f.Strategy)
	}
	if !f.ClientLevelDP() {
		return configErr("privacy \"example\" cannot use a helper: secure aggregation needs client-level noise from both servers; use privacy \"client\" or \"both\", or leave out the helper")
	}
	return nil
}

// withLeaderToken returns h with a fresh leader token if it has none (h
// itself is left alone: it may be a caller's template).
func withLeaderToken(h *HelperRef) *HelperRef {
	if h == nil || h.LeaderToken != "" {
		return h
	}
	c := *h
	c.LeaderToken = NewToken()
	return &c
}

// CheckHelper runs the checks that need the calibrated noise multiplier
// c: with a helper, the study's sums must not wrap around ℤ_{2^64} at any
// round's c (protocol.Study.CheckSecureAggregation). Without a helper it
// returns nil.
func (f *File) CheckHelper(c float64) error {
	if f.Helper == nil {
		return nil
	}
	st := f.Public(c, false)
	if cs, err := f.CalibrateSchedule(); err == nil && cs != nil {
		st.NoiseMultipliers = cs
	}
	if err := st.CheckSecureAggregation(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// validHelperURL reports whether u is an http:// or https:// URL with a
// host (checked without net/url: this package stays off the network
// packages).
func validHelperURL(u string) bool {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(u, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	return ok && host != "" && !strings.ContainsAny(host, " \t\n?#@")
}
