package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// The coordinator serves a declared public file by its SHA-256 to anyone,
// the welcome's study declares it (source and hash, no path), an unknown
// hash is 404, and a file changed on disk since the declaration is never
// served.
func TestServePublicInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "totals.csv")
	body := []byte("date,national\n2026-11-20,1200\n")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl := study.File{Settings: protocol.Settings{Name: "public", Epsilon: 4, Rounds: 2, ExpectedClients: 2, Hidden: []int{4}}}
	if err := tmpl.DeclarePublic(path, "test totals", "built-in holidays"); err != nil {
		t.Fatal(err)
	}
	f := start(t, tmpl, lhaNames(2), nil)
	pub := f.eng.Study.PublicInputs
	if len(pub) != 2 || pub[0].Name != protocol.PublicTotals || pub[0].Source != "test totals" || pub[1].Name != protocol.PublicHolidays || pub[1].SHA256 != "" {
		t.Fatalf("the public study declares %+v", pub)
	}
	get := func(sha string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(f.http.URL + "/api/public/" + sha)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := get(pub[0].SHA256)
	if code != http.StatusOK || pub[0].Check(b) != nil {
		t.Fatalf("GET the declared file: %d, %q", code, b)
	}
	if code, _ := get("00" + pub[0].SHA256[2:]); code != http.StatusNotFound {
		t.Fatalf("an unknown hash: %d, want 404", code)
	}
	if err := os.WriteFile(path, append(body, "2026-11-21,1300\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, b := get(pub[0].SHA256); code != http.StatusInternalServerError || pub[0].Check(b) == nil {
		t.Fatalf("a file changed since the declaration: %d, %q", code, b)
	}
}
