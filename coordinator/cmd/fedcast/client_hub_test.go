package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/series"
)

// TestClientHub takes the demo study's seat with `fedcast client --hub` and
// checks the hub file it writes: every area of the seat's file, every level.
func TestClientHub(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	demoOut := &syncBuffer{}
	env := &Env{Stdout: demoOut, Stderr: io.Discard, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	demoDone := make(chan int, 1)
	go func() {
		demoDone <- run(ctx, env, []string{"demo", "--addr", "127.0.0.1:0", "--state", state, "--lhas", "4", "--expected", "3",
			"--rounds", "3", "--epsilon", "3", "--round-length", "2s", "--once", "--start", "now", "--log-level", "error"})
	}()
	re := regexp.MustCompile(`join as an LHA in your browser: (\S+)\n\s+your seat's synthetic case data: (\S+)\n`)
	var m []string
	for m == nil {
		select {
		case code := <-demoDone:
			t.Fatalf("demo ended (exit %d) before printing its links:\n%s", code, demoOut.String())
		case <-ctx.Done():
			t.Fatalf("no join link:\n%s", demoOut.String())
		case <-time.After(20 * time.Millisecond):
		}
		m = re.FindStringSubmatch(demoOut.String())
	}
	hub := filepath.Join(t.TempDir(), "forecast.csv")
	var out, errb bytes.Buffer
	cenv := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	if code := run(ctx, cenv, []string{"client", "--join", m[1], "--data", m[2], "--hub", hub, "--max-windows", "5", "--quiet",
		"--publish-epsilon", "1", "--publish-store", filepath.Join(t.TempDir(), "published.json")}); code != 0 {
		t.Fatalf("client exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "wrote the forecast of") {
		t.Errorf("client did not report the hub file:\n%s", errb.String())
	}
	f, err := os.Open(hub)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fs, err := forecast.ReadHub(f)
	if err != nil {
		t.Fatal(err)
	}
	d, err := series.ReadFile(m[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(d.Regions) {
		t.Fatalf("%d forecasts, the seat's file has %d areas", len(fs), len(d.Regions))
	}
	for i, fc := range fs {
		if fc.Location != d.Regions[i].Name || !fc.ReferenceDate.Equal(d.Regions[i].End()) || fc.Horizon() != 4 {
			t.Errorf("forecast %d: %s %s horizon %d", i, fc.Location, fc.ReferenceDate, fc.Horizon())
		}
	}
	checkPublishedHub(t, strings.TrimSuffix(hub, ".csv")+"-published.csv", d, out.String())
	cancel()
	<-demoDone
}

// --max-windows takes 0 (all) or a positive cap.
func TestClientMaxWindowsFlag(t *testing.T) {
	if code, _, errs := fedcast(t, "client", "--join", "http://127.0.0.1:1/join#x", "--data", "x.csv", "--max-windows", "-1"); code != 2 || !strings.Contains(errs, "--max-windows") {
		t.Errorf("negative cap: exit %d, %q", code, errs)
	}
}
