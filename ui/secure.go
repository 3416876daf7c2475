package ui

import (
	"fmt"
	"net/url"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// SecureWords are the page's sentences about who can see an LHA's update:
// with a helper (two-server secure aggregation) or without.
type SecureWords struct {
	// Who says which servers receive the update and what each can see.
	Who string
	// Caveat is the collusion caveat (empty without a helper).
	Caveat string
	// Sent describes a report under "What left this computer" (empty
	// without a helper).
	Sent string
	// Picked: whether this LHA was picked never leaves the computer
	// (empty without a helper).
	Picked string
	// Each says what is sent each round with a helper: one report of the
	// same size every round, picked or not (empty without a helper: the
	// page then says an update is sent only when picked).
	Each string
}

// Secure returns the words for study st, whose coordinator is at
// coordinator (the page's address).
func Secure(st *protocol.Study, coordinator string) SecureWords {
	if st == nil || st.Helper == nil {
		return SecureWords{Who: "The coordinator receives each clipped update your computer sends (before any noise is added): " +
			"whoever runs the coordinator could see it. The noise protects your data from the public and from the other health authorities."}
	}
	h := st.Helper
	fp := "unreadable key"
	if pk, err := secagg.ParsePublicKey(h.PublicKey); err == nil {
		fp = pk.Fingerprint()
	}
	op := h.Operator
	if op == "" {
		op = "a second organisation"
	}
	leader := "the coordinator"
	if h.LeaderOperator != "" {
		leader = "the coordinator run by " + h.LeaderOperator
	}
	host := h.URL
	if u, err := url.Parse(h.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	enc, err := secagg.NewEncoder(st.ClipNorm, st.NoiseMultiplier)
	bound := ""
	if err == nil {
		bound = fmt.Sprintf(" Before it is split, your update is rounded to whole steps and its length is checked to be at most %d steps.", enc.B())
	}
	leaderBytes := 8 * st.Params
	// The frame as it leaves (the size "What left this computer" lists):
	// the report (its labels, the sealed key, the coordinator's share)
	// behind the frame header.
	frame := protocol.HeaderSize + secagg.ReportSize(st.Params)
	labels := frame - leaderBytes - secagg.SealedSize
	return SecureWords{
		Who: fmt.Sprintf("Your update is split between two servers: %s at %s (this page's address; it has no key of its own) "+
			"and the helper run by %s at %s (key fingerprint %s). Neither server alone can see your update, and each adds its own noise.",
			leader, coordinator, op, host, fp),
		Caveat: "This protection holds only if the two organisations never share their data with each other.",
		Sent: fmt.Sprintf("Each round this page sends one report of %s bytes: %s bytes of random-looking numbers for the coordinator, "+
			"a sealed key of %d bytes from which only the helper can rebuild its part, and %d bytes that label the report "+
			"(its round, its length, a random report number and a checksum).%s",
			FormatCount(float64(frame)), FormatCount(float64(leaderBytes)), secagg.SealedSize, labels, bound),
		Picked: "Whether you were picked for a round never leaves this computer: every round it sends a report of the same size, at the same moment.",
		Each: fmt.Sprintf("Every round, picked or not: one report of %s bytes, split between the two servers. It holds the changes to the model's %s numbers, "+
			"cut down to a fixed size (at most %s), when this computer picked itself for the round, and zeros otherwise. "+
			"No case counts, no dates, no area names, not even how many rows your file has.",
			FormatCount(float64(frame)), FormatCount(float64(st.Params)), FormatCount(st.ClipNorm)),
	}
}

// SecureEpsilon says, in a sentence for the join page, the privacy spent
// in a study with a helper: against either server on its own (proven) and
// against everyone else, who sees only the released model carrying both
// servers' noise (argued, √2 times the noise, not proven).
func SecureEpsilon(perServer, public float64) string {
	return fmt.Sprintf("Spent against either server on its own: ε = %s. Against everyone else, who sees only the released model "+
		"with both servers' noise: ε = %s (a reasoned figure, not a proven one).", FormatEpsilon(perServer), FormatEpsilon(public))
}

// SecureEpsilonShort is SecureEpsilon for a table cell of the dashboard.
func SecureEpsilonShort(perServer, public float64) string {
	return fmt.Sprintf("either server: ε = %s; everyone else: ε = %s (reasoned, not proven)", FormatEpsilon(perServer), FormatEpsilon(public))
}

// secure returns the page's words about the two servers.
func (c *JoinPage) secure() SecureWords {
	host := c.S.Link
	if u, err := url.Parse(c.S.Link); err == nil && u.Host != "" {
		host = u.Host
	}
	return Secure(&c.S.Welcome.Study, host)
}
