package study

import (
	"github.com/fedcast/fedcast/shared/model"
)

// CreateOptions configure Create.
type CreateOptions struct {
	// Template holds the study parameters; its LHAs and admin hash are
	// replaced. Defaults are applied.
	Template File
	// Names of the LHAs to enrol. Required (at least one).
	Names []string
	// Design, if set, fills the template's zero training fields (see
	// FillDesign) before the defaults are applied.
	Design *model.Design
}

// Secrets are the tokens Create made: print them once, store them nowhere
// the coordinator can be made to read them.
type Secrets struct {
	Admin string   `json:"admin"`
	LHAs  []string `json:"lhas"` // LHAs[i] is the token of File.LHAs[i]
}

// Create makes a new study file with fresh tokens for names and an admin
// token (and, with a helper, a leader token if the template has none),
// and validates it.
func Create(opt CreateOptions) (*File, *Secrets, error) {
	f := opt.Template
	f.Version = FileVersion
	f.Helper = withLeaderToken(f.Helper)
	s := &Secrets{Admin: NewToken()}
	f.AdminTokenSHA256 = HashToken(s.Admin)
	f.LHAs = nil
	for _, n := range opt.Names {
		tok := NewToken()
		s.LHAs = append(s.LHAs, tok)
		f.LHAs = append(f.LHAs, LHA{Name: n, TokenSHA256: HashToken(tok)})
	}
	if opt.Design != nil {
		f.FillDesign(*opt.Design)
	}
	f.Defaults()
	if err := f.Validate(); err != nil {
		return nil, nil, err
	}
	c, err := f.Calibrate()
	if err != nil {
		return nil, nil, err
	}
	if err := f.CheckHelper(c); err != nil {
		return nil, nil, err
	}
	return &f, s, nil
}

// FillDesign is the one mapping of a design (model.Design, the presets)
// onto the study: it fills the training recipe's zero-valued fields from d
// (shared/model): rounds T, m for the file's N LHAs (so call it after the
// LHAs are enrolled, and before Defaults), S, E, the learning rate, the
// hidden layers, the features and the input days H. Fields already set
// are kept.
func (f *File) FillDesign(d model.Design) {
	f.fillTraining(d)
	if f.Rounds == 0 {
		f.Rounds = d.Rounds
	}
	if f.ExpectedClients == 0 {
		f.ExpectedClients = d.ExpectedClients(len(f.LHAs))
		if f.Sequential() {
			f.ExpectedClients = len(f.LHAs) // every LHA takes a turn in every round
		}
	}
	if f.Features == "" {
		f.Features = string(d.Features)
		if d.Weekly != nil && f.Weekly == nil {
			f.fillWeekly(*d.Weekly)
		}
	}
	if f.Damping == 0 && d.Damping != 1 {
		f.Damping = d.Damping
	}
}
