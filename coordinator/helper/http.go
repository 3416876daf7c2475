package helper

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Paths of the helper's HTTP API.
const (
	// PathAggregate takes a protocol.HelperRequest (POST, JSON) and answers
	// a protocol.HelperResponse, or a protocol.HelperError with status
	// 400 (bad request), 403 (no or a wrong leader token), 409 (refused: round out of order, already
	// released with other reports, past T or the budget, another helper's
	// study) or 500.
	PathAggregate = study.HelperPathAggregate
	// PathKey answers the helper's public key and fingerprint (GET).
	PathKey = "/helper/v1/key"
)

// maxRequest bounds a request body: a study value and, per report, an ID
// and a sealed seed (about 160 bytes in JSON) for up to 2·10⁵ reports.
const maxRequest = 32 << 20

// Handler returns the helper's HTTP API.
func (h *Helper) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathAggregate, func(w http.ResponseWriter, r *http.Request) {
		var req protocol.HelperRequest
		d := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, protocol.HelperError{Error: "the request is not a helper request: " + err.Error()})
			return
		}
		resp, err := h.Aggregate(&req)
		var ref *Refusal
		switch {
		case errors.As(err, &ref):
			writeJSON(w, ref.Status, protocol.HelperError{Error: ref.Msg})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, protocol.HelperError{Error: err.Error()})
		default:
			writeJSON(w, http.StatusOK, resp)
		}
	})
	mux.HandleFunc("GET "+PathKey, func(w http.ResponseWriter, r *http.Request) {
		pk := h.PublicKey()
		writeJSON(w, http.StatusOK, map[string]any{"public_key": pk.Bytes(), "fingerprint": pk.Fingerprint()})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
