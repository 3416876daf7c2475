package ui

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
)

// The page's fingerprint is the study hash, grouped; another setting
// gives another fingerprint.
func TestStudyFingerprint(t *testing.T) {
	st := protocol.Study{Settings: protocol.Settings{Name: "Kreise", Rounds: 5, Horizon: 7}}
	fp := StudyFingerprint(&st)
	if strings.ReplaceAll(fp, " ", "") != st.ID() || len(strings.Fields(fp)) != 8 {
		t.Fatalf("fingerprint %q of study %s", fp, st.ID())
	}
	st.Horizon = 14
	if StudyFingerprint(&st) == fp {
		t.Error("a study with another horizon has the same fingerprint")
	}
}
