package session

import (
	"errors"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
)

// In a continuing study the LHA's file is read again at the first round
// of each campaign after the first; a failing read keeps the old windows.
func TestRefreshAtCampaignStart(t *testing.T) {
	st := guardStudy()
	st.Rounds, st.Campaigns = 6, 3
	longer := &series.Dataset{Regions: []*series.Region{linear("a", 200)}}
	var asked []int
	fail := false
	s := &Session{study: st, opt: Options{Refresh: func(k int) (*series.Dataset, error) {
		asked = append(asked, k)
		if fail {
			return nil, errors.New("file gone")
		}
		return longer, nil
	}}}
	old, err := PrepareTraining(st, &series.Dataset{Regions: []*series.Region{linear("a", 60)}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 6; r++ {
		cur := old
		got := s.refresh(r, &cur)
		if cur != got {
			t.Errorf("round %d: the windows kept are not the ones returned", r)
		}
		if fresh := r == 3 || r == 5; (got != old) != fresh {
			t.Errorf("round %d: new windows %v, want %v", r, got != old, fresh)
		}
		if r == 3 && got.Total() <= old.Total() {
			t.Errorf("round 3 trains on %d windows, the longer file gives more than %d", got.Total(), old.Total())
		}
	}
	if len(asked) != 2 || asked[0] != 2 || asked[1] != 3 {
		t.Errorf("Refresh called for campaigns %v, want 2 and 3", asked)
	}
	fail = true
	if cur := old; s.refresh(3, &cur) != old {
		t.Error("a failed read replaced the windows")
	}
	one := &Session{study: protocol.Study{Settings: protocol.Settings{Rounds: 6}}, opt: s.opt}
	if cur := old; one.refresh(3, &cur) != old {
		t.Error("a study of one campaign refreshed its windows")
	}
}
