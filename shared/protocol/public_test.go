package protocol

import (
	"errors"
	"testing"
)

func TestPublicInputDeclareAndCheck(t *testing.T) {
	b := []byte("date,national\n2026-11-20,1200\n")
	p, err := DeclareFile(PublicTotals, "national totals, Robert Koch-Institut, 2026-11-27", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(b); err != nil {
		t.Fatalf("the declared file: %v", err)
	}
	changed := append([]byte(nil), b...)
	changed[len(changed)-2] = '1'
	if err := p.Check(changed); !errors.Is(err, ErrPublicInput) {
		t.Fatalf("a changed file: %v, want ErrPublicInput", err)
	}
	hol := PublicInput{Name: PublicHolidays, Source: "github.com/rickar/cal/v2, built into fedcast"}
	if err := CheckPublicInputs([]PublicInput{p, hol}); err != nil {
		t.Fatal(err)
	}
	if err := hol.Check(b); !errors.Is(err, ErrPublicInput) {
		t.Fatalf("checking a built-in input against a file: %v", err)
	}
	for name, bad := range map[string][]PublicInput{
		"twice":         {p, p},
		"no source":     {{Name: PublicTotals, SHA256: p.SHA256, Bytes: p.Bytes}},
		"bad hash":      {{Name: PublicTotals, Source: "x", SHA256: "abc", Bytes: 3}},
		"hash, no size": {{Name: PublicTotals, Source: "x", SHA256: p.SHA256}},
		"other name":    {{Name: "weather", Source: "x"}},
	} {
		if err := CheckPublicInputs(bad); !errors.Is(err, ErrPublicInput) {
			t.Errorf("%s: %v, want ErrPublicInput", name, err)
		}
	}
}
