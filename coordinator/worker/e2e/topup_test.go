package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// post sends body to the worker's admin route path with token.
func (w *workerd) post(path, token, body string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.base+path, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestTopUpOnWorkerd: a continuing study on the worker (2 campaigns of one
// round, ε = 2) is topped up between its campaigns through POST
// /api/admin/topup while its two `fedcast client`s stay connected. The
// clients reconnect and receive the top-up; the one whose own limit
// (--max-epsilon 5) allows it trains in the added campaign, the one whose
// limit is the budget it joined under sits it out; the study ends after
// the 3 rounds with the lifetime budget 3. Both name the added campaign
// as the third of 3 and say when it starts.
func TestTopUpOnWorkerd(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := []string{"A", "B"}
	s := newStudy(t, names, addr, "--epsilon", "2", "--campaigns", "2", "--every", "12s", "--rounds", "1", "--round-length", "3s")
	w := startWorkerd(t, bin, s.raw, addr, filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web"))
	a := startClient(t, s, 0, "--max-epsilon", "5")
	b := startClient(t, s, 1)
	w.waitStatus(60*time.Second, func(st protocol.Status) bool { return st.Round == 1 })

	if code, body := w.post("/api/admin/topup", s.links[0], `{"epsilon": 3}`); code != http.StatusUnauthorized {
		t.Errorf("top-up with an LHA's link: %d %s", code, body)
	}
	code, body := w.post("/api/admin/topup", s.admin, `{"epsilon": 3, "campaigns": 1}`)
	var r struct {
		TopUp   protocol.TopUp `json:"top_up"`
		Rounds  int            `json:"rounds"`
		Planner *struct {
			Expected float64 `json:"expected_relative_wis"`
		} `json:"planner"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil || r.TopUp.Epsilon != 3 || r.Rounds != 3 || r.Planner == nil || !(r.Planner.Expected > 0) {
		t.Fatalf("top-up: %d %s\nworkerd:\n%s", code, body, w.log)
	}
	st := w.waitStatus(90*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	if st.Round != 3 || st.EpsilonBudget != 3 || st.EpsilonSpent > 3 {
		t.Errorf("final status: %d of %d rounds, ε %v of %v", st.Round, st.Rounds, st.EpsilonSpent, st.EpsilonBudget)
	}
	outA, outB := a.wait(t, time.Minute), b.wait(t, time.Minute)
	for name, out := range map[string]string{"A": outA, "B": outB} {
		if m := finishedLine.FindStringSubmatch(out); m == nil || m[2] != "3" {
			t.Errorf("client %s did not see the study end after 3 rounds:\n%s", name, out)
		}
	}
	if !strings.Contains(outA, "sent update (round 3)") || !strings.Contains(outA, "round 3 released (campaign 3 of 3, round 1 of 1)") {
		t.Errorf("client A (limit 5) did not train in the added round, or misnamed its campaign:\n%s", outA)
	}
	if strings.Contains(outB, "sent update (round 3)") || !strings.Contains(outB, "campaign 2 of 3 ended; campaign 3 starts at") ||
		!strings.Contains(outB, "raised the study's lifetime budget (top-up 1") || !strings.Contains(outB, "start it again with --max-epsilon 3") {
		t.Errorf("client B (limit 2, the budget it joined under) trained in the added round, or was not told when it starts:\n%s", outB)
	}
	t.Logf("client B's rounds:\n%s", rounds(outB))
}

// rounds is out's lines about rounds, the connection and the budget.
func rounds(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "round") || strings.Contains(l, "campaign") || strings.Contains(l, "top-up") || strings.Contains(l, "max-epsilon") || strings.Contains(l, "connect") || strings.Contains(l, "budget") || strings.Contains(l, "limit") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
