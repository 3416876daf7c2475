package study

import (
	"bytes"
	"testing"
)

// FuzzStateUnmarshal: stored state bytes (a Durable Object's storage, a
// file) never panic the decoder, and whatever it accepts encodes back to
// bytes that decode to the same state.
func FuzzStateUnmarshal(f *testing.F) {
	f.Add([]byte(`{"version":1,"genesis":{"study":"e30=","study_sha256":"00","noise_multiplier":1,"clients":2,"model":[0.5],"insecure_seed":false,"created":"2026-11-24T00:00:00Z"},"events":[{"round":1,"sample_rate":0.5,"noise_multiplier":1,"epsilon":0.3,"delta":1e-05,"model_sha256":"ab"}],"mechanisms":[{"gamma":0.001}],"model":[0.25]}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"events":[{}],"mechanisms":[{},{}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s State
		if err := s.UnmarshalBinary(b); err != nil {
			return
		}
		out, err := s.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted state does not encode: %v", err)
		}
		var back State
		if err := back.UnmarshalBinary(out); err != nil {
			t.Fatalf("re-encoded state does not decode: %v\n%s", err, out)
		}
		again, err := back.MarshalBinary()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("state changed in a second round trip:\n%s\n%s", out, again)
		}
	})
}
