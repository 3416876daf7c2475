package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// ModelFile is a released model as an LHA keeps it to forecast later
// without the coordinator (`fedcast client --model`, read by `fedcast
// forecast --model`): the model (protocol.Model) and the study's public
// parameters, which say how to read it (design, H, P, smoothing, the
// training split the guard needs).
type ModelFile struct {
	protocol.Model
	Study *protocol.Study `json:"study,omitempty"`
}

// ErrModelFile is wrapped by every error of ReadModelFile.
var ErrModelFile = errors.New("session: bad model file")

// ReadModelFile reads and checks a model file: JSON, the study's
// parameters present, the weights fit its layers and hash to
// model_sha256. name is the file's name for the errors.
func ReadModelFile(r io.Reader, name string) (ModelFile, error) {
	var m ModelFile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%w: %s is not a model file (JSON): %w", ErrModelFile, name, err)
	}
	switch {
	case m.Study == nil:
		return m, fmt.Errorf("%w: %s has no \"study\" field (the study's public parameters): write it with fedcast client --model", ErrModelFile, name)
	case len(m.Layers) < 2:
		return m, fmt.Errorf("%w: in %s, field \"layers\" %v needs at least 2 sizes", ErrModelFile, name, m.Layers)
	case !slices.Equal(m.Layers, m.Study.Layers):
		return m, fmt.Errorf("%w: in %s, field \"layers\" %v differs from the study's %v", ErrModelFile, name, m.Layers, m.Study.Layers)
	}
	if want := nn.NewMLP(m.Layers...).NumParams(); want != len(m.Weights) {
		return m, fmt.Errorf("%w: in %s, field \"weights\" has %d numbers, the layers %v need %d", ErrModelFile, name, len(m.Weights), m.Layers, want)
	}
	if got := protocol.HashHex(m.Weights); got != m.ModelSHA256 {
		return m, fmt.Errorf("%w: in %s, the weights hash to %s, field \"model_sha256\" says %s", ErrModelFile, name, got, m.ModelSHA256)
	}
	return m, nil
}
