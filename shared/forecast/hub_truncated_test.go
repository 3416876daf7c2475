package forecast

import (
	"errors"
	"strings"
	"testing"
)

// TestReadHubTruncatedQuote: a file cut inside a quoted field is an error,
// not a panic (csv.Reader.FieldPos panics after a failed Read).
func TestReadHubTruncatedQuote(t *testing.T) {
	in := strings.Join(HubColumns, ",") + "\n\"000000"
	if _, err := ReadHub(strings.NewReader(in)); !errors.Is(err, ErrHub) {
		t.Fatalf("err %v, want ErrHub", err)
	}
}
