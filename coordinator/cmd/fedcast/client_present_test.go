package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestClientPresentOnly: `fedcast client` with a file too short for the
// study (10 days) does not exit: it says in plain words why the study
// cannot use the file and what to do, takes part present only, and the
// coordinator counts it ready (issue 23: ready never depends on what the
// file holds).
func TestClientPresentOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, addr := t.TempDir(), freeAddr(t)
	studyPath, out, cases := clientStudy(t, dir, addr, 1, 10)
	link := regexp.MustCompile(`http://\S+/join#\S+`).FindString(out)
	admin := regexp.MustCompile(`http://\S+/admin#(\S+)`).FindStringSubmatch(out)
	if link == "" || admin == nil {
		t.Fatalf("no join or admin link in:\n%s", out)
	}
	startServe(t, ctx, studyPath, dir, addr)

	errb := &syncBuffer{}
	cctx, cstop := context.WithCancel(ctx)
	cenv := &Env{Stdout: io.Discard, Stderr: errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- run(cctx, cenv, []string{"client", "--join", link, "--data", cases, "--quiet"}) }()
	defer func() { cstop(); <-done }()
	for ready := 0; ready != 1; {
		select {
		case c := <-done:
			done <- c
			t.Fatalf("the client with a short file ended (exit %d):\n%s", c, errb.String())
		case <-ctx.Done():
			t.Fatalf("the client with a short file was not counted ready (%d):\n%s", ready, errb.String())
		case <-time.After(50 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/admin/status", nil)
		req.Header.Set("Authorization", "Bearer "+admin[1])
		var st protocol.AdminStatus
		if resp, err := http.DefaultClient.Do(req); err == nil {
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			ready = st.Ready
		}
	}
	s := errb.String()
	for _, want := range []string{"this study cannot use " + cases, "need at least", "how to fix it: export more days",
		"tell your coordinator", "taking part present only", "trains nothing"} {
		if !strings.Contains(s, want) {
			t.Errorf("client's words lack %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "series:") {
		t.Errorf("a Go package prefix:\n%s", s)
	}
}

// clientStudy makes a 2-LHA study of 2 rounds served at addr (study new's
// output is out) and an LHA file of synthetic data, areas areas of days
// days, in dir.
func clientStudy(t *testing.T, dir, addr string, areas, days int) (studyPath, out, cases string) {
	t.Helper()
	studyPath = filepath.Join(dir, "study.json")
	code, out, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "2", "--rounds", "2", "--addr", addr, "--out", studyPath)
	if code != 0 {
		t.Fatalf("study new: exit %d: %s", code, errs)
	}
	cases = filepath.Join(dir, "cases.csv")
	if code, _, errs := fedcast(t, "data", "synth", "--areas", strconv.Itoa(areas), "--days", strconv.Itoa(days), "--seed", "3", "--out", cases); code != 0 {
		t.Fatalf("data synth: %s", errs)
	}
	return studyPath, out, cases
}
