package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Report is a two-server secure aggregation report (shared/secagg): in a
// study with a helper every LHA sends one every round, a sharing of its
// encoded update or of zero, always of the same size. Body is the
// marshalled secagg.Report (a whole number of 64-bit words); the frame
// carries it as its payload, with no metadata.
type Report struct {
	Round int
	Body  []byte
}

func (*Report) Type() Type { return TypeReport }

// encodeReport frames a report: the binary header with n = len(Body)/8
// words and the body as payload.
func encodeReport(m *Report) ([]byte, error) {
	if len(m.Body)%8 != 0 || len(m.Body) == 0 {
		return nil, fmt.Errorf("%w: a report of %d bytes (a positive multiple of 8)", ErrMalformed, len(m.Body))
	}
	if len(m.Body)/8 > MaxWeights {
		return nil, fmt.Errorf("%w: a report of %d bytes", ErrTooLarge, len(m.Body))
	}
	b, err := encodeBinary(TypeReport, m.Round, nil, make([]float64, len(m.Body)/8))
	if err != nil {
		return nil, err
	}
	copy(b[HeaderSize:], m.Body)
	rehash(b)
	return b, nil
}

// decodeReport reads a report frame's payload p (its hash checked).
func decodeReport(round int, meta, p []byte) (Message, error) {
	if len(meta) != 0 {
		return nil, fmt.Errorf("%w: a report frame carries no metadata", ErrMalformed)
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: an empty report", ErrMalformed)
	}
	return &Report{Round: round, Body: append([]byte(nil), p...)}, nil
}

// rehash sets a binary frame's payload hash (bytes 16–48) after its
// payload was written.
func rehash(b []byte) {
	l := binary.LittleEndian.Uint32(b[12:])
	sum := sha256.Sum256(b[HeaderSize+int(l):])
	copy(b[16:48], sum[:])
}
