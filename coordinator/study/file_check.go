package study

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// Limits of the schedule (protocol's, where every bound of a study is
// written; named here for the callers of this package).
const (
	// DefaultRoundLength is round_length when the file gives none.
	DefaultRoundLength = protocol.DefaultRoundLength
	// MinRoundLength is the shortest round_length accepted.
	MinRoundLength = protocol.MinRoundLength
)

func configErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, a...))
}

// Validate checks the file (after Defaults): its own fields (version,
// enrolment, tokens, quorum, helper, public files), then the study value
// it describes with protocol.Study.Validate, which owns every bound of a
// study parameter. It does not calibrate the noise: Calibrate does.
func (f *File) Validate() error {
	if f.Version != FileVersion {
		return configErr("version is %d, this fedcast reads version %d", f.Version, FileVersion)
	}
	if err := f.checkEnrolment(); err != nil {
		return err
	}
	if err := f.checkPublic(); err != nil {
		return err
	}
	st := f.study()
	if err := st.Validate(); err != nil {
		var se *protocol.StudyError
		if errors.As(err, &se) {
			return configErr("%s", se.Problem)
		}
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if f.From != "" && f.To != "" && f.From > f.To { // both YYYY-MM-DD: checked above
		return configErr("from %s is after to %s: the study period would hold no day", f.From, f.To)
	}
	if f.RestartGrace < 0 {
		return configErr("restart_grace is %v, must be ≥ 0", time.Duration(f.RestartGrace))
	}
	if f.StartQuorum < 0 || f.StartQuorum > len(f.LHAs) {
		return configErr("start_quorum is %d, must be in [0, N=%d]", f.StartQuorum, len(f.LHAs))
	}
	if _, err := f.StrategyParams.Calibrate(f.Rounds, f.LocalEpochs, f.Delta, f.AccountantKind()); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return f.validateHelper()
}

// checkEnrolment checks the LHAs and the tokens: at least one LHA, names
// given and unique, token hashes well formed and never used twice (the
// admin's included).
func (f *File) checkEnrolment() error {
	if len(f.LHAs) == 0 {
		return configErr("no LHAs enrolled")
	}
	if !validHash(f.AdminTokenSHA256) {
		return configErr("admin_token_sha256 is not a hex SHA-256")
	}
	names := map[string]bool{}
	hashes := map[string]bool{f.AdminTokenSHA256: true}
	for i, l := range f.LHAs {
		if strings.TrimSpace(l.Name) == "" {
			return configErr("lhas[%d] has no name", i)
		}
		if names[l.Name] {
			return configErr("lhas[%d]: name %q enrolled twice", i, l.Name)
		}
		names[l.Name] = true
		if !validHash(l.TokenSHA256) {
			return configErr("lhas[%d] (%s): token_sha256 is not a hex SHA-256", i, l.Name)
		}
		if hashes[l.TokenSHA256] {
			return configErr("lhas[%d] (%s): token hash used twice", i, l.Name)
		}
		hashes[l.TokenSHA256] = true
	}
	return nil
}

func validHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && s == strings.ToLower(s)
}
