package publish

import (
	"errors"
	"fmt"

	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/nn"
	"github.com/fedcast/fedcast/shared/protocol"
)

// ErrNotLipschitz means a study's design is not Lipschitz-bounded, so its
// model cannot be published with a person-level guarantee: the forecast
// to publish then comes from PublicForecaster.
var ErrNotLipschitz = errors.New("publish: the study's design is not Lipschitz-bounded")

// ErrNoModelYet means a Lipschitz study has released no model yet (its
// words are for people: the page shows them).
var ErrNoModelYet = errors.New("the study has released no model yet: publish after its first round")

// StudyForecaster returns the forecaster of a study's released model
// params, for a study of the Lipschitz design (features "lipschitz",
// model.Lipschitz; layers H, hidden …, 1 with H = 7·(W−1)+1, damping 0
// meaning 1). The model is projected to spectral norm ≤ 1 per layer
// (nothing changes for a model the coordinator released: it is projected
// already), and the network keeps of its first layer only the columns of
// the W−1 inputs that are ever non-zero: a matrix of some of the columns
// of W has spectral norm ≤ ‖W‖₂, so the forecaster's network is
// 1-Lipschitz too, and for every history its median is the study model's
// forecast on the log scale. Any other design gives ErrNotLipschitz.
func StudyForecaster(features string, layers []int, damping float64, params []float64) (*Forecaster, error) {
	if features != string(model.Lipschitz) {
		return nil, ErrNotLipschitz
	}
	if len(layers) < 2 || layers[len(layers)-1] != 1 || (layers[0]-1)%WeekDays != 0 || layers[0] < WeekDays+1 {
		return nil, fmt.Errorf("publish: the study's layers %v do not read whole weeks (7·(weeks−1)+1 days) or give more than 1 output", layers)
	}
	full := nn.NewMLP(layers...)
	if len(params) != full.NumParams() {
		return nil, fmt.Errorf("publish: the study's model has %d parameters, its layers %v need %d", len(params), layers, full.NumParams())
	}
	if damping == 0 {
		damping = 1
	}
	p := append([]float64(nil), params...)
	full.ProjectSpectral(p)
	h, rows := layers[0], layers[1]
	in := (h - 1) / WeekDays // W − 1
	net := nn.NewMLP(append([]int{in}, layers[1:]...)...)
	q := make([]float64, 0, net.NumParams())
	for r := range rows {
		q = append(q, p[r*h:r*h+in]...)
	}
	q = append(q, p[rows*h:]...) // the first layer's biases, then the other layers
	f := &Forecaster{Kappa: model.LipschitzKappa, Weeks: in + 1, Damping: damping, Net: net, Params: q}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return f, nil
}

// ForStudy returns the forecaster an LHA of study st publishes with and
// the hex SHA-256 to mark: the study's released model (released, as
// received and checked against its hash) when the study's design is
// Lipschitz-bounded, otherwise PublicForecaster and "". A Lipschitz study
// without a released model yet is an error: there is nothing to publish
// with.
func ForStudy(st protocol.Study, released []float64) (*Forecaster, string, error) {
	if st.Features != string(model.Lipschitz) {
		return PublicForecaster(), "", nil
	}
	if len(released) == 0 {
		return nil, "", ErrNoModelYet
	}
	f, err := StudyForecaster(st.Features, st.Layers, st.Damping, released)
	if err != nil {
		return nil, "", err
	}
	return f, protocol.HashHex(released), nil
}
