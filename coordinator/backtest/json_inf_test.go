package backtest

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/fl"
)

// TestJSONInfiniteRatio: where an outbreak has died out, the hub baseline
// forecasts zero exactly and a ratio to its error is infinite. The JSON
// is still written (JSON has no infinity): such a ratio is "inf", at the
// top level, in a quarter and at an origin, and it reads back as +Inf.
// Scores of nothing stay 0.
func TestJSONInfiniteRatio(t *testing.T) {
	inf := math.Inf(1)
	s := Summary{Design: "weekly", RelativeWIS: 1.5, RelativeMAE: 2, Coverage50: math.NaN(), Coverage95: 0.9,
		GeomeanQuarterRelativeWIS: fl.JSONFloat(inf), WorstQuarter: WorstQuarter{Quarter: "2021Q2", RelativeWIS: fl.JSONFloat(inf)},
		Quarters: []QuarterScores{
			{Quarter: "2021Q1", Scores: Scores{Origins: 3, RelativeWIS: 0.9, RelativeMAE: 0.8, Coverage50: 0.5, Coverage95: 0.95}},
			{Quarter: "2021Q2", Scores: Scores{Origins: 1, RelativeWIS: inf, RelativeMAE: inf, Coverage50: 1, Coverage95: 1}},
		},
		PerOrigin: []OriginScore{{Origin: "2021-03-29", RelativeWIS: 0.7, EpsilonSpent: 1}, {Origin: "2021-04-05", RelativeWIS: inf, EpsilonSpent: 2}},
	}
	var js bytes.Buffer
	if err := s.WriteJSON(&js); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if n := strings.Count(js.String(), `"relative_wis": "inf"`); n != 3 {
		t.Errorf(`%d "relative_wis": "inf" in the JSON, want 3 (worst quarter, quarter, origin):%s`, n, js.String())
	}
	var back Summary
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	q, o := back.Quarters[1], back.PerOrigin[1]
	if q.Quarter != "2021Q2" || !math.IsInf(q.RelativeWIS, 1) || !math.IsInf(q.RelativeMAE, 1) || q.Origins != 1 || q.Coverage95 != 1 {
		t.Errorf("quarter read back %+v", q)
	}
	if o.Origin != "2021-04-05" || !math.IsInf(o.RelativeWIS, 1) || o.EpsilonSpent != 2 {
		t.Errorf("origin read back %+v", o)
	}
	if back.Quarters[0] != s.Quarters[0] || back.PerOrigin[0] != s.PerOrigin[0] {
		t.Errorf("finite scores changed on the way: %+v %+v", back.Quarters[0], back.PerOrigin[0])
	}
	if back.RelativeWIS != 1.5 || back.Coverage50 != 0 || !math.IsInf(float64(back.GeomeanQuarterRelativeWIS), 1) {
		t.Errorf("top level read back: relative WIS %v, 50 %% coverage %v (nothing scored: 0), geomean %v", back.RelativeWIS, back.Coverage50, back.GeomeanQuarterRelativeWIS)
	}
}
