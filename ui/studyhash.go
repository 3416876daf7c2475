package ui

import (
	"strings"

	"github.com/fedcast/fedcast/shared/protocol"
)

// StudyFingerprint writes the study hash (protocol.Study.ID: the study's
// identity, over every setting of the study) for people to compare, in
// groups of eight characters. Empty when the study cannot be hashed.
func StudyFingerprint(st *protocol.Study) string {
	id := st.ID()
	var groups []string
	for len(id) >= 8 {
		groups = append(groups, id[:8])
		id = id[8:]
	}
	return strings.Join(groups, " ")
}

// studyFingerprint is the fingerprint of the study this page joined.
func (c *JoinPage) studyFingerprint() string { return StudyFingerprint(&c.S.Welcome.Study) }
