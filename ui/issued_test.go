package ui

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// memAccounts is an in-memory session.AccountStore (localStorage in the
// browser).
type memAccounts map[string][]byte

func (m memAccounts) LoadAccount(key string) ([]byte, error) { return m[key], nil }
func (m memAccounts) SaveAccount(key string, b []byte) error {
	m[key] = append([]byte(nil), b...)
	return nil
}

// The page keeps the forecasts it issued, per study and LHA, and the
// guard scores the model on them once the file chosen later holds their
// outcomes: the weeks scored grow by the issued ones.
func TestPageKeepsIssuedForecasts(t *testing.T) {
	csv, err := os.ReadFile("../coordinator/e2e/testdata/lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	var early []string // the file three weeks earlier
	for _, line := range strings.Split(strings.TrimSpace(string(csv)), "\n") {
		if line < "2020-12-11" || strings.HasPrefix(line, "date") {
			early = append(early, line)
		}
	}
	full, err := series.ParseBytes(csv, "lha.csv")
	if err != nil {
		t.Fatal(err)
	}
	before, err := series.ParseBytes([]byte(strings.Join(early, "\n")+"\n"), "early.csv")
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{Layers: []int{10, 1}, Params: 11,
		Settings: protocol.Settings{Name: "issued-test", Epsilon: 3, Delta: 1e-5, Rounds: 2, History: 10, Horizon: 7, Smoothing: "centered",
			TrainFraction: 0.9}}
	model := make([]float64, 11)
	model[9] = 1
	// A study name of its own: IssuedStore is the package's, and another
	// test's forecast still running in the background writes under its
	// own study's key, never this one.
	store := memAccounts{}
	IssuedStore = store
	defer func() { IssuedStore = nil }()
	origins := func(s *JoinState) int {
		n := 0
		for _, f := range s.Forecasts {
			n += f.Guard.Origins
		}
		return n
	}
	fresh := &JoinState{Welcome: &protocol.Welcome{Study: st, LHA: "other"}, Data: full}
	fresh.forecast(model)
	base := origins(fresh)

	s := &JoinState{Welcome: &protocol.Welcome{Study: st, LHA: "me"}, Data: before}
	s.forecast(model)
	rows, err := session.ReadIssued(bytes.NewReader(store["fedcast-issued:issued-test:me"]), "store")
	if err != nil || len(rows) != 2 {
		t.Fatalf("after the first forecast the store holds %d rows (%v): %q", len(rows), err, store["fedcast-issued:issued-test:me"])
	}
	s.Data = full // this week's file, three weeks on
	s.forecast(model)
	if got := origins(s); got <= base {
		t.Fatalf("the guard scored %d weeks with the issued forecasts, %d without: the issued ones are not counted", got, base)
	}
	rows, _ = session.ReadIssued(bytes.NewReader(store["fedcast-issued:issued-test:me"]), "store")
	if len(rows) != 4 {
		t.Fatalf("after two forecasts the store holds %d rows, want 2 areas × 2 weeks", len(rows))
	}
}
