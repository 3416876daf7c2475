package publish

import (
	"bytes"
	"testing"
)

// FuzzReadStore: a damaged or foreign file of published forecasts gives an
// error or a store, never a panic, and a store read back writes and reads
// again to the same records.
func FuzzReadStore(f *testing.F) {
	f.Add([]byte(`{"publications":[{"area":"01001","origin":"2021-03-01","median_log":4.1,"kappa":50,"spread":0.3,"mechanism":{"Gamma":0.0001,"Sigma2":9000,"Steps":[65,9,6]},"epsilon_per_person_year":1,"delta":1e-6}]}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"publications":null}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadStore(bytes.NewReader(b))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			t.Fatalf("a store read could not be written: %v", err)
		}
		s2, err := ReadStore(&buf)
		if err != nil || len(s2.Records) != len(s.Records) {
			t.Fatalf("round trip: %v, %d then %d records", err, len(s.Records), len(s2.Records))
		}
		if _, err := s.CaseEpsilon(DefaultDelta); err != nil {
			t.Fatalf("a store read cannot be accounted: %v", err)
		}
	})
}
