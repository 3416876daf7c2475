package secagg

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A Report is what an LHA sends the leader each round, in one piece (as
// in DAP's upload), so that it can never reach one server but not the
// other: the report ID, the seed of the helper's share sealed to the
// helper, and the leader's share. The leader forwards ID and SealedSeed to
// the helper and keeps Leader.
type Report struct {
	Round      int
	ID         ReportID
	SealedSeed []byte   // SealedSize bytes
	Leader     []uint64 // k − XOF(seed) in ℤ_{2^64}
}

// NewReport encodes nothing: it shares the integer vector k (already
// encoded, Encoder.Encode; all zeros for an LHA not picked) for round of
// the study with hash study, as the LHA numbered client. The seed and the
// report ID come from crypto/rand.
func NewReport(helper *PublicKey, study [32]byte, round int, client uint32, k []int64) (*Report, error) {
	return newReport(helper, study, round, NewReportID(client), NewSeed(), k)
}

// newReport is NewReport with the ID and the seed given (tests).
func newReport(helper *PublicKey, study [32]byte, round int, id ReportID, seed Seed, k []int64) (*Report, error) {
	sealed, err := Seal(helper, seed, AssociatedData(study, round, id))
	if err != nil {
		return nil, err
	}
	r := &Report{Round: round, ID: id, SealedSeed: sealed, Leader: make([]uint64, len(k))}
	Share(r.Leader, k, seed, Ring64)
	return r, nil
}

// reportVersion is the first byte of a marshalled report.
const reportVersion = 1

// reportHeader is the size of a marshalled report before the leader's
// share: version, 3 reserved zero bytes, round, report ID, sealed seed,
// dimension: 112 bytes, so that a report is a whole number of 64-bit
// words.
const reportHeader = 4 + 8 + ReportIDSize + SealedSize + 4

// ReportSize returns the size in bytes of a marshalled report of
// dimension d: 8·d + 112 = 8·(d + 14). Every report of a study has the
// same size.
func ReportSize(d int) int { return reportHeader + 8*d }

// ErrReport is wrapped by the errors of UnmarshalReport.
var ErrReport = errors.New("secagg: malformed report")

// Marshal returns the report's bytes: version (1), three zero bytes,
// round (8 bytes), ID (16), sealed seed (80), d (4), then the leader's
// share as d little-endian 64-bit words; integers big-endian except the
// share.
func (r *Report) Marshal() []byte {
	b := make([]byte, ReportSize(len(r.Leader)))
	b[0] = reportVersion
	binary.BigEndian.PutUint64(b[4:], uint64(r.Round))
	copy(b[12:], r.ID[:])
	copy(b[12+ReportIDSize:], r.SealedSeed)
	binary.BigEndian.PutUint32(b[reportHeader-4:], uint32(len(r.Leader)))
	p := b[reportHeader:]
	for j, v := range r.Leader {
		binary.LittleEndian.PutUint64(p[8*j:], v)
	}
	return b
}

// UnmarshalReport decodes a report of dimension d (the study's number of
// parameters). Errors wrap ErrReport and say which field is wrong.
func UnmarshalReport(b []byte, d int) (*Report, error) {
	if len(b) != ReportSize(d) {
		return nil, fmt.Errorf("%w: %d bytes, a report of %d parameters has %d", ErrReport, len(b), d, ReportSize(d))
	}
	if b[0] != reportVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrReport, b[0], reportVersion)
	}
	if b[1]|b[2]|b[3] != 0 {
		return nil, fmt.Errorf("%w: reserved bytes are not zero", ErrReport)
	}
	round := binary.BigEndian.Uint64(b[4:])
	if round > 1<<31 {
		return nil, fmt.Errorf("%w: round %d", ErrReport, round)
	}
	if n := binary.BigEndian.Uint32(b[reportHeader-4:]); int(n) != d {
		return nil, fmt.Errorf("%w: dimension field %d, want %d", ErrReport, n, d)
	}
	r := &Report{Round: int(round), SealedSeed: append([]byte(nil), b[12+ReportIDSize:12+ReportIDSize+SealedSize]...),
		Leader: make([]uint64, d)}
	copy(r.ID[:], b[12:])
	p := b[reportHeader:]
	for j := range r.Leader {
		r.Leader[j] = binary.LittleEndian.Uint64(p[8*j:])
	}
	return r, nil
}
