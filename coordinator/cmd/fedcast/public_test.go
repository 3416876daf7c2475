package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
)

// 'study new --public FILE --public-source TEXT' declares the totals file
// (source, SHA-256, size, its path for serve) and the built-in holiday
// calendar; the public study parameters carry both without the path.
func TestStudyNewPublic(t *testing.T) {
	dir := t.TempDir()
	totals, out := filepath.Join(dir, "totals.csv"), filepath.Join(dir, "s.json")
	body := []byte("kind,name,state,population,date,cases\ntotal,national,,,2026-11-20,1200\n")
	if err := os.WriteFile(totals, body, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--public", totals,
		"--public-source", "national totals, RKI, 2026-11-27", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Public input totals: national totals, RKI, 2026-11-27 (71 bytes, SHA-256 ") ||
		!strings.Contains(stdout, "Public input holidays: public holidays by state from github.com/rickar/cal/v2") {
		t.Errorf("output:\n%s", stdout)
	}
	f, _, err := study.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.PublicInputs) != 2 || f.PublicInputs[0].Path != totals || f.PublicInputs[0].Check(body) != nil {
		t.Fatalf("study file public inputs %+v", f.PublicInputs)
	}
	st := f.Public(1, false)
	wire, _ := json.Marshal(st)
	if len(st.PublicInputs) != 2 || st.PublicInputs[0].Name != protocol.PublicTotals || strings.Contains(string(wire), totals) {
		t.Fatalf("public study declares %+v", st.PublicInputs)
	}
	if code, _, stderr := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--public", filepath.Join(dir, "missing.csv"),
		"--out", filepath.Join(dir, "t.json")); code == 0 || !strings.Contains(stderr, "missing.csv") {
		t.Fatalf("a missing public file: exit %d: %s", code, stderr)
	}
}

// study new reads the --public file as the LHAs will and refuses one they
// cannot read, naming the file, the line and the field; no study file is
// written.
func TestStudyNewRefusesUnreadablePublic(t *testing.T) {
	const header = "kind,name,state,population,date,cases\n"
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"a case file", "date,county_id,cases\n2020-10-01,01001,3\n", []string{"line 1", "header", "fedcast data public"}},
		{"byte-order mark", "\uFEFF" + header + "total,national,,,2020-10-01,5\n", []string{"line 1", "byte-order mark"}},
		{"semicolons", strings.ReplaceAll(header+"total,national,,,2020-10-01,5\n", ",", ";"), []string{"line 1"}},
		{"bad date", header + "total,national,,,2020-10-01,5\ntotal,national,,,01.10.2020,5\n", []string{"line 3", "field date", "01.10.2020"}},
		{"negative count", header + "total,national,,,2020-10-01,-5\n", []string{"line 2", "field cases", "-5"}},
		{"no national total", header + "total,Bayern,,,2020-10-01,5\n", []string{"no national total"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			pub, out := filepath.Join(dir, "pub.csv"), filepath.Join(dir, "s.json")
			if err := os.WriteFile(pub, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--preset", "weekly", "--public", pub, "--out", out)
			if code == 0 || !strings.Contains(errs, pub) {
				t.Errorf("exit %d, stderr %q; want an error naming %s", code, errs, pub)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the study file was written")
			}
		})
	}
}

// The client lists the public inputs as public and checks its copy of the
// totals file with --public: a changed copy is refused, naming the file.
func TestClientChecksPublicFile(t *testing.T) {
	dir := t.TempDir()
	body := []byte("date,national\n2026-11-20,1200\n")
	good, changed := filepath.Join(dir, "good.csv"), filepath.Join(dir, "changed.csv")
	os.WriteFile(good, body, 0o600)
	os.WriteFile(changed, append(body, "2026-11-21,1\n"...), 0o600)
	decl, err := protocol.DeclareFile(protocol.PublicTotals, "RKI totals", body)
	if err != nil {
		t.Fatal(err)
	}
	st := protocol.Study{PublicInputs: []protocol.PublicInput{decl, {Name: protocol.PublicHolidays, Source: "built in"}}}
	var stderr strings.Builder
	env := &Env{Stdout: io.Discard, Stderr: &stderr}
	if err := checkPublicInputs(context.Background(), env, st, good, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"public input totals (public data, not from any LHA): RKI totals, SHA-256 " + decl.SHA256,
		"public input holidays (public data, not from any LHA): built in", good + " has the declared SHA-256"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stderr.String())
		}
	}
	if err := checkPublicInputs(context.Background(), env, st, changed, ""); err == nil || !strings.Contains(err.Error(), changed) || !strings.Contains(err.Error(), "Use the file the study declares") {
		t.Fatalf("a changed copy: %v", err)
	}
	if err := checkPublicInputs(context.Background(), env, protocol.Study{}, good, ""); err == nil {
		t.Fatal("--public in a study without public inputs was accepted")
	}
}

// Without --public the client downloads the declared file from the
// coordinator and checks it; a coordinator serving other bytes is refused.
func TestClientFetchesPublicFile(t *testing.T) {
	body := []byte("date,national\n2026-11-20,1200\n")
	decl, _ := protocol.DeclareFile(protocol.PublicTotals, "RKI totals", body)
	serve := body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/public/"+decl.SHA256 {
			http.NotFound(w, r)
			return
		}
		w.Write(serve)
	}))
	defer srv.Close()
	st := protocol.Study{PublicInputs: []protocol.PublicInput{decl}}
	var stderr strings.Builder
	env := &Env{Stdout: io.Discard, Stderr: &stderr}
	base := coordinatorBase(srv.URL + "/join#TOKEN")
	if err := checkPublicInputs(context.Background(), env, st, "", base); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "downloaded from the coordinator (30 bytes), SHA-256 checked") {
		t.Errorf("output:\n%s", stderr.String())
	}
	serve = append(body, '1')
	if err := checkPublicInputs(context.Background(), env, st, "", base); err == nil || !strings.Contains(err.Error(), "the coordinator's copy") {
		t.Fatalf("other bytes from the coordinator: %v", err)
	}
}
