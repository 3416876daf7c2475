package object

import (
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/secagg"
)

// A study with a helper is refused on Workers with what to do instead.
func TestHelperStudyRefused(t *testing.T) {
	raw, _ := newStudy(t, 1)
	f, err := study.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := secagg.GenerateKey()
	f.Helper = &study.HelperRef{URL: "https://helper.example.org", PublicKey: key.PublicKey().Bytes()}
	if raw, err = f.Marshal(); err != nil {
		t.Fatal(err)
	}
	_, _, err = New(raw, nil, nil, t0)
	if err == nil || !strings.Contains(err.Error(), "run it with fedcast serve, or create the study without --helper") {
		t.Fatalf("a study with a helper on Workers: %v", err)
	}
}
