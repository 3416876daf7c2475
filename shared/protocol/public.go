package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Public inputs. A forecasting design may read public data beside each
// LHA's own file: national and state case totals, a holiday calendar
// (forecast.PublicInputs). A study declares them in its study file, each
// with its source and, for a file, the SHA-256 of its bytes; every LHA
// receives the declaration in the welcome, the page lists them as public,
// and an LHA uses a public file only if its bytes have the declared hash.
// Public inputs are never taken from LHAs' data.

// Names of the public inputs a design reads.
const (
	PublicTotals   = "totals"   // national and state daily case totals (CSV)
	PublicHolidays = "holidays" // public holidays by state
)

// PublicInput declares one public input of a study.
type PublicInput struct {
	// Name is PublicTotals or PublicHolidays.
	Name string `json:"name"`
	// Source says where the input comes from, for people (a publisher and
	// a URL, or a library and its version).
	Source string `json:"source"`
	// SHA256 is the hex SHA-256 of the file's bytes; empty for an input
	// built into fedcast (its Source names the version). The coordinator
	// serves the file at /api/public/SHA256.
	SHA256 string `json:"sha256,omitempty"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes,omitempty"`
}

// ErrPublicInput is wrapped by every error about a public input.
var ErrPublicInput = errors.New("protocol: public input")

// Validate checks a declaration.
func (p PublicInput) Validate() error {
	switch {
	case p.Name != PublicTotals && p.Name != PublicHolidays:
		return fmt.Errorf("%w: name %q, want %q or %q", ErrPublicInput, p.Name, PublicTotals, PublicHolidays)
	case p.Source == "" || len(p.Source) > 500:
		return fmt.Errorf("%w %q: the source must say where it comes from (1 to 500 characters)", ErrPublicInput, p.Name)
	case p.SHA256 != "" && !isHexHash(p.SHA256):
		return fmt.Errorf("%w %q: sha256 %q is not 64 hex digits", ErrPublicInput, p.Name, p.SHA256)
	case p.Bytes < 0 || (p.SHA256 == "") != (p.Bytes == 0):
		return fmt.Errorf("%w %q: a file needs both sha256 and bytes (got %d bytes)", ErrPublicInput, p.Name, p.Bytes)
	}
	return nil
}

// Check returns nil when b is the declared file: its size and SHA-256.
func (p PublicInput) Check(b []byte) error {
	if p.SHA256 == "" {
		return fmt.Errorf("%w %q is built in (%s), not a file", ErrPublicInput, p.Name, p.Source)
	}
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != p.SHA256 || int64(len(b)) != p.Bytes {
		return fmt.Errorf("%w %q: this file has %d bytes and SHA-256 %s; the study declares %d bytes and %s (%s). Use the file the study declares",
			ErrPublicInput, p.Name, len(b), got, p.Bytes, p.SHA256, p.Source)
	}
	return nil
}

// DeclareFile returns the declaration of the public file b.
func DeclareFile(name, source string, b []byte) (PublicInput, error) {
	sum := sha256.Sum256(b)
	p := PublicInput{Name: name, Source: source, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(b))}
	return p, p.Validate()
}

// CheckPublicInputs validates a study's declarations (at most one per name).
func CheckPublicInputs(ps []PublicInput) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if err := p.Validate(); err != nil {
			return err
		}
		if seen[p.Name] {
			return fmt.Errorf("%w %q is declared twice", ErrPublicInput, p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

func isHexHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && hex.EncodeToString(b) == s
}
