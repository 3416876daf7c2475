package study

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
)

// PublicFile is a public input declared in the study file
// (protocol.PublicInput): what every LHA receives, and for a file the path
// the coordinator serves it from (absolute, as `study new --public`
// writes it, or relative to serve's directory; never sent to the LHAs).
type PublicFile struct {
	protocol.PublicInput
	Path string `json:"path,omitempty"`
}

// publicInputs returns the declarations every LHA receives.
func (f *File) publicInputs() []protocol.PublicInput {
	var out []protocol.PublicInput
	for _, p := range f.PublicInputs {
		out = append(out, p.PublicInput)
	}
	return out
}

// checkPublic validates the study file's public inputs.
func (f *File) checkPublic() error {
	if err := protocol.CheckPublicInputs(f.publicInputs()); err != nil {
		return configErr("public_inputs: %v", err)
	}
	for _, p := range f.PublicInputs {
		if (p.Path == "") != (p.SHA256 == "") {
			return configErr("public_inputs %q: a file needs both path and sha256; a built-in input neither", p.Name)
		}
	}
	return nil
}

// PublicFileBytes returns the bytes of the declared public file whose
// SHA-256 is sha (dir: the study file's directory), checked against the
// declaration; ok is false when no file has that hash.
func (f *File) PublicFileBytes(dir, sha string) (b []byte, ok bool, err error) {
	for _, p := range f.PublicInputs {
		if p.SHA256 != sha || p.Path == "" {
			continue
		}
		path := p.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if b, err = os.ReadFile(path); err != nil {
			return nil, true, fmt.Errorf("study: public input %q: %w", p.Name, err)
		}
		if err := p.Check(b); err != nil {
			return nil, true, fmt.Errorf("study: %s changed since the study file declared it: %w", path, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// DeclarePublic adds the public totals file at path (read now, hashed) and
// the built-in holiday calendar to the study file's public inputs.
func (f *File) DeclarePublic(path, source, holidays string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("study: public totals: %w", err)
	}
	if source == "" {
		source = "public case totals, file " + filepath.Base(path)
	}
	p, err := protocol.DeclareFile(protocol.PublicTotals, source, b)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	f.PublicInputs = append(f.PublicInputs, PublicFile{PublicInput: p, Path: abs})
	if holidays != "" {
		f.PublicInputs = append(f.PublicInputs, PublicFile{PublicInput: protocol.PublicInput{Name: protocol.PublicHolidays, Source: holidays}})
	}
	return f.checkPublic()
}

// fillWeekly sets the weekly design's windows, with the smoothing and
// horizon the LHAs' issued forecasts are scored in (set whatever they
// were): the trailing 7-day average 7 days after the last reported day is
// the next week's total / 7.
func (f *File) fillWeekly(w model.Weekly) {
	f.Weekly = &w
	f.Smoothing, f.Horizon, f.History = "trailing", 7, w.Inputs() // H: the network's inputs
	f.Outputs = 0
	if k := w.Outputs(); k > 1 {
		f.Outputs = k // a quantile head
	}
}
