package server

import (
	"net/http"
	"strconv"
)

// servePublic serves a public input file the study file declares
// (study.PublicFile), by its SHA-256: GET /api/public/{sha256}. The bytes
// are checked against the declaration before they are sent; each LHA
// checks them again (protocol.PublicInput.Check). Public data, no token.
func (s *Server) servePublic(w http.ResponseWriter, r *http.Request) {
	b, ok, err := s.eng.File.PublicFileBytes(s.studyDir, r.PathValue("sha256"))
	switch {
	case !ok:
		http.Error(w, "no public input of this study has that SHA-256", http.StatusNotFound)
		return
	case err != nil:
		s.log.Error("public input", "err", err)
		http.Error(w, "the coordinator's copy of this public input does not match the study file", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Cache-Control", "public, max-age=86400, immutable")
	w.Write(b)
}
