package ledger

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The export of a continuing study keeps its shape: rounds lists every
// round of every campaign with its campaign number, epsilon_spent is the
// lifetime figure (the last round's); a one-campaign study's rounds carry
// no campaign field.
func TestExportCampaigns(t *testing.T) {
	for _, tc := range []struct {
		study string
		want  []int
	}{
		{`{"name":"t","rounds":6,"campaigns":3}`, []int{1, 1, 2, 2, 3}},
		{`{"name":"t","rounds":6}`, []int{0, 0, 0, 0, 0}},
	} {
		l := open(t, filepath.Join(t.TempDir(), "ledger.db"))
		g := genesis()
		g.Study = json.RawMessage(tc.study)
		if err := l.Init(g); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 5; i++ {
			if err := l.Commit(round(i), nil); err != nil {
				t.Fatal(err)
			}
		}
		e, err := l.Export(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range e.Rounds {
			if r.Campaign != tc.want[i] {
				t.Errorf("%s: round %d in campaign %d, want %d", tc.study, r.Round, r.Campaign, tc.want[i])
			}
		}
		if e.EpsilonSpent != round(5).Epsilon {
			t.Errorf("epsilon_spent %v, want the lifetime %v", e.EpsilonSpent, round(5).Epsilon)
		}
		b, _ := json.Marshal(e.Rounds[0])
		if has := strings.Contains(string(b), `"campaign":1`); has != (tc.want[0] == 1) {
			t.Errorf("%s: round JSON %s", tc.study, b)
		}
	}
}
