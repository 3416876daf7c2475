package helper

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	PathKey = study.HelperPathKey
)

// maxRequest bounds a request body: a study value and, per report, an ID
// and a sealed seed (about 160 bytes in JSON) for up to 2·10⁵ reports.
const maxRequest = 32 << 20

// Handler returns the helper's HTTP API, and at "/" a short page in
// words for whoever opens the helper's address in a browser (its
// operator, or the coordinator's checking that it is reachable). Every
// aggregation request is logged (Options.Log).
func (h *Helper) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathAggregate, func(w http.ResponseWriter, r *http.Request) {
		var req protocol.HelperRequest
		d := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil {
			msg := "the request is not a helper request: " + err.Error()
			h.opt.Log.Warn("request refused", "status", http.StatusBadRequest, "reason", msg, "from", r.RemoteAddr)
			writeJSON(w, http.StatusBadRequest, protocol.HelperError{Error: msg})
			return
		}
		resp, err := h.Aggregate(&req)
		h.logRequest(r, &req, resp, err)
		var ref *Refusal
		switch {
		case errors.As(err, &ref):
			writeJSON(w, ref.Status, protocol.HelperError{Error: ref.Msg})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, protocol.HelperError{Error: fmt.Sprintf(
				"the helper failed on its own side, not because of the request (its operator sees this in its log): %v", err)})
		default:
			writeJSON(w, http.StatusOK, resp)
		}
	})
	mux.HandleFunc("GET "+PathKey, func(w http.ResponseWriter, r *http.Request) {
		pk := h.PublicKey()
		writeJSON(w, http.StatusOK, map[string]any{"public_key": pk.Bytes(), "fingerprint": pk.Fingerprint()})
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "This is a fedcast helper: the second server of two-server secure aggregation.\n"+
			"Key fingerprint: %s (compare it with the one the study's join page shows).\n"+
			"It answers only a study's coordinator (POST %s); it has no pages of its own.\n", h.PublicKey().Fingerprint(), PathAggregate)
		if m := h.opt.MaxEpsilon; m > 0 {
			fmt.Fprintf(w, "Its operator serves studies with a lifetime budget up to ε = %g.\n", m)
		}
	})
	return mux
}

// logRequest writes one line about an answered aggregation request.
func (h *Helper) logRequest(r *http.Request, req *protocol.HelperRequest, resp *protocol.HelperResponse, err error) {
	attrs := []any{"round", req.Round, "study", req.Study.Name}
	if hash, herr := req.Study.Hash(); herr == nil {
		attrs = append(attrs, "study_sha256", hex.EncodeToString(hash[:]))
	}
	if req.Study.Helper != nil && req.Study.Helper.LeaderOperator != "" {
		attrs = append(attrs, "coordinator", req.Study.Helper.LeaderOperator)
	}
	attrs = append(attrs, "from", r.RemoteAddr)
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		h.opt.Log.Warn("request refused", append(attrs, "status", ref.Status, "reason", ref.Msg)...)
	case err != nil:
		h.opt.Log.Error("round not served: the helper's own failure (the coordinator abandons the round)", append(attrs, "err", err)...)
	case resp.Repeated:
		h.opt.Log.Info("round served again (a retry: the same share as before)", append(attrs, "reports", len(resp.Kept), "rejected", resp.Rejected, "epsilon", resp.Epsilon)...)
	default:
		h.opt.Log.Info("round served", append(attrs, "reports", len(resp.Kept), "rejected", resp.Rejected,
			"epsilon", resp.Epsilon, "epsilon_budget", req.Study.Epsilon, "rounds", req.Study.Rounds)...)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
