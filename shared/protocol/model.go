package protocol

// Model is the one JSON form of a global model outside the binary
// round_result: the admin's GET /api/admin/model and `fedcast ledger
// export --model` write it (and a client's --model may). Layers are the
// MLP's layer sizes (input H first, output 1 last) that say how Weights
// (shared/nn's flat parameter layout) are read; ModelSHA256 is
// HashHex(Weights).
type Model struct {
	Round       int       `json:"round"`
	Final       bool      `json:"final"`
	Layers      []int     `json:"layers"`
	ModelSHA256 string    `json:"model_sha256"`
	Weights     []float64 `json:"weights"`
}

// NewModel returns the model of round with its hash.
func NewModel(round int, final bool, layers []int, w []float64) Model {
	return Model{Round: round, Final: final, Layers: layers, ModelSHA256: HashHex(w), Weights: w}
}
