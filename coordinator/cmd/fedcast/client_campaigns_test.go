package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/session"
)

// TestClientThroughCampaigns: with campaigns, `fedcast client --join`
// stays until the last campaign ends; between campaigns it says when the
// next starts, and its --model file holds the latest released model, with
// which `fedcast forecast` forecasts offline.
func TestClientThroughCampaigns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if code, _, errs := fedcast(t, "study", "new", "--names", "Kreis A,Kreis B", "--epsilon", "2", "--campaigns", "2", "--every", "4s", "--rounds", "1",
		"--round-length", "1s", "--addr", addr, "--links", path("links.csv"), "--out", path("s.json")); code != 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(path("links.csv"))
	if err != nil {
		t.Fatal(err)
	}
	links, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(links) < 3 {
		t.Fatalf("links %v: %s", err, b)
	}
	serveDone := make(chan int, 1)
	go func() {
		code, _, _ := runEnv(ctx, "serve", "--study", path("s.json"), "--addr", addr, "--log-level", "error")
		serveDone <- code
	}()
	// The clients dial once: start them when serve listens.
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("serve never listened on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 2)
	for i, name := range []string{"a", "b"} {
		if code, _, errs := fedcast(t, "data", "synth", "--areas", "2", "--days", "120", "--seed", fmt.Sprint(i+1), "--out", path(name+".csv")); code != 0 {
			t.Fatal(errs)
		}
		errb := &syncBuffer{}
		go func() {
			var out strings.Builder
			env := &Env{Stdout: &out, Stderr: errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
			code := run(ctx, env, []string{"client", "--join", links[i+1][1], "--data", path(name + ".csv"), "--model", path(name + ".model.json")})
			done <- result{code, out.String(), errb.String()}
		}()
		defer func() {
			if t.Failed() {
				t.Logf("client %s:\n%s", name, errb.String())
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("%s: %v", what, ctx.Err())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	readModel := func() *session.ModelFile {
		f, err := os.Open(path("a.model.json"))
		if err != nil {
			return nil
		}
		defer f.Close()
		m, err := session.ReadModelFile(f, "a.model.json")
		if err != nil {
			return nil
		}
		return &m
	}
	waitFor("the model file after campaign 1", func() bool { m := readModel(); return m != nil })
	if m := readModel(); m.Model.Round != 1 || m.Model.Final {
		t.Errorf("between the campaigns the model file holds round %d (final %v), want round 1", m.Model.Round, m.Model.Final)
	}
	if code, out, errs := runEnv(ctx, "forecast", "--model", path("a.model.json"), "--data", path("a.csv")); code != 0 || !strings.Contains(out, "(no change) for") {
		t.Errorf("fedcast forecast between campaigns: exit %d\n%s\n%s", code, out, errs)
	}
	// client --forecast with the running client's own link: a visit that
	// reads the latest model (round 1, or round 2 when campaign 2 ran
	// meanwhile on a slow machine) and leaves; client a keeps its connection and
	// trains campaign 2 (checked below: it ends with the study, not
	// "replaced").
	if code, out, errs := runEnv(ctx, "client", "--join", links[1][1], "--data", path("a.csv"), "--forecast", "--model", path("visit.model.json")); code != 0 ||
		!strings.Contains(errs, "read the model released after round ") || !strings.Contains(out, "(no change) for") {
		t.Errorf("client --forecast beside the running client: exit %d\n%s\n%s", code, out, errs)
	}
	for range 2 {
		r := <-done
		if r.code != 0 || !strings.Contains(r.out, "study finished (rounds) after 2 rounds") || strings.Contains(r.err, "took over") {
			t.Fatalf("client exit %d:\n%s\n%s", r.code, r.out, r.err)
		}
		for _, want := range []string{"round 1 released (campaign 1 of 2, round 1 of 1)", "campaign 1 of 2 ended; campaign 2 starts at", "round 2 released (campaign 2 of 2, round 1 of 1)"} {
			if !strings.Contains(r.err, want) {
				t.Errorf("client output lacks %q:\n%s", want, r.err)
			}
		}
	}
	if m := readModel(); m == nil || m.Model.Round != 2 || !m.Model.Final {
		t.Errorf("after the last campaign the model file holds %+v, want round 2, final", m)
	}
	cancel()
	<-serveDone
}

// A client whose join link another connection took over (a page opened
// with the same link) says why it stopped, and that forecasting takes
// nothing over.
func TestReplacedHint(t *testing.T) {
	err := replacedHint(fmt.Errorf("session: %w", &protocol.Error{Code: protocol.CodeReplaced, Message: "a newer connection joined with this token"}))
	if msg := err.Error(); !strings.Contains(msg, "a newer connection joined") || !strings.Contains(msg, "a page opened with the link") ||
		!strings.Contains(msg, "'fedcast client --forecast' or 'fedcast forecast --model FILE': neither takes over") || strings.Contains(msg, "for example with --forecast") {
		t.Errorf("replaced: %v", err)
	}
	other := &protocol.Error{Code: protocol.CodeUnauthorized, Message: "x"}
	if got := replacedHint(other); !errors.Is(got, other) || got.Error() != other.Error() {
		t.Errorf("another error changed: %v", got)
	}
}

// The client says a top-up happened and whether its own limit keeps it
// out of the added rounds.
func TestTopUpWordsInTheClient(t *testing.T) {
	up := protocol.TopUp{Number: 1, FromEpsilon: 2, Epsilon: 3, Campaigns: 1, Rounds: 2, At: time.Now()}
	for _, tc := range []struct {
		limit float64
		want  string
	}{
		{2, "it sits out any round that would take the study past it; to agree to the new budget, start it again with --max-epsilon 3"},
		{5, "within this client's own limit ε = 5: it takes part in the added rounds"},
	} {
		got := topUpWords(up, tc.limit)
		if !strings.Contains(got, "raised the study's lifetime budget (top-up 1, ") || !strings.Contains(got, "ε 2 → 3, 1 campaign of 2 rounds added") || !strings.Contains(got, tc.want) {
			t.Errorf("limit %g: %q", tc.limit, got)
		}
	}
}
