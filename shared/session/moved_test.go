package session

import (
	"errors"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/protocol/studytest"
)

// An LHA that joined a study refuses a later welcome (a reconnect) whose
// study differs in any single field: the study hash covers the whole
// value, and the fields come from reflection, so a new field is covered
// without editing this test. The fields sameStudy used to miss (horizon,
// smoothing, dates, train fraction, round length) are among them.
func TestSessionRefusesMovedStudy(t *testing.T) {
	for _, st := range []protocol.Study{fakeStudy(), cyclicStudy()} {
		idx := 0
		welcome := func(st protocol.Study) *protocol.Welcome {
			return &protocol.Welcome{Study: st, LHA: "A", Index: &idx, State: protocol.StateRunning}
		}
		s := &Session{}
		if err := s.welcome(welcome(st)); err != nil {
			t.Fatal(err)
		}
		if err := s.welcome(welcome(studytest.Clone(st))); err != nil {
			t.Fatalf("the same study refused on reconnect: %v", err)
		}
		fields := map[string]bool{}
		for _, v := range studytest.Variants(st) {
			fields[v.Field] = true
			if err := s.welcome(welcome(v.Study)); !errors.Is(err, ErrBadStudy) {
				t.Errorf("strategy %q: moved to a study with another %s: %v, want ErrBadStudy", st.Strategy, v.Field, err)
			}
		}
		for _, f := range []string{"Settings.Horizon", "Settings.Smoothing", "Settings.From", "Settings.To", "Settings.TrainFraction", "Settings.RoundLength"} {
			if !fields[f] {
				t.Errorf("no variant changes %s", f)
			}
		}
	}
}
