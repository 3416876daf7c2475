package series

import (
	"bytes"
	"math"
)

func nan() float64 { return math.NaN() }

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
