package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// TestWeeklyStudyEndToEnd runs a live study of the weekly design: `data
// public` writes the public inputs file from synthetic data, `study new
// --preset weekly --public` declares it, serve serves it, two `fedcast
// client`s download it by hash, train through the federated path and
// forecast with it; `fedcast forecast` needs --public and checks its hash;
// and the released model's forecast changes when the public totals do.
func TestWeeklyStudyEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if code, _, errs := fedcast(t, "data", "synth", "--areas", "4", "--days", "240", "--start", "2020-03-01", "--seed", "5", "--no-intervention", "--r0", "1.05",
		"--out", path("cases.csv"), "--populations", path("pops.csv")); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := fedcast(t, "data", "public", "--cases", path("cases.csv"), "--counties", path("pops.csv"), "--out", path("public.csv")); code != 0 {
		t.Fatal(errs)
	}
	all, err := series.ReadFile(path("cases.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a.csv", "b.csv"} {
		var b bytes.Buffer
		if err := series.Write(&b, &series.Dataset{Regions: all.Regions[2*i : 2*i+2]}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path(name), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	code, out, errs := fedcast(t, "study", "new", "--lhas", "2", "--epsilon", "4", "--rounds", "2", "--round-length", "2s", "--addr", addr,
		"--preset", "weekly", "--public", path("public.csv"), "--public-source", "test totals", "--out", path("study.json"))
	if code != 0 || !strings.Contains(out, "Design weekly") {
		t.Fatalf("study new: exit %d: %s %s", code, out, errs)
	}
	links := regexp.MustCompile(`http://\S+/join#\S+`).FindAllString(out, -1)
	if len(links) < 2 {
		t.Fatalf("no join links in:\n%s", out)
	}
	startServe(t, ctx, path("study.json"), dir, addr)
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 2)
	for i, data := range []string{"a.csv", "b.csv"} {
		go func() {
			var o, e bytes.Buffer
			env := &Env{Stdout: &o, Stderr: &e, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
			c := run(ctx, env, []string{"client", "--join", links[i], "--data", path(data), "--quiet",
				"--model", path(data + ".model.json"), "--hub", path(data + ".hub.csv")})
			done <- result{c, o.String(), e.String()}
		}()
	}
	for range 2 {
		r := <-done
		if r.code != 0 || !strings.Contains(r.err, "downloaded from the coordinator") || !strings.Contains(r.out, "study finished") ||
			!strings.Contains(r.out, "public national and state totals") {
			t.Fatalf("client: exit %d\n%s\n%s", r.code, r.out, r.err)
		}
		if m := regexp.MustCompile(`; (\d+) training windows`).FindStringSubmatch(r.err); m == nil || m[1] == "0" {
			t.Errorf("client trained on no weekly windows:\n%s", r.err)
		}
	}
	checkWeeklyForecast(t, path)
}

// checkWeeklyForecast: `fedcast forecast` of the weekly model needs the
// declared public file, and the model's forecast reads its totals.
func checkWeeklyForecast(t *testing.T, path func(string) string) {
	t.Helper()
	model := path("a.csv.model.json")
	if code, _, errs := fedcast(t, "forecast", "--model", model, "--data", path("a.csv")); code != 2 || !strings.Contains(errs, "--public") {
		t.Errorf("forecast without --public: exit %d, %s", code, errs)
	}
	if code, out, errs := fedcast(t, "forecast", "--model", model, "--data", path("a.csv"), "--public", path("public.csv")); code != 0 || !strings.Contains(out, "shared model's own forecast") {
		t.Errorf("forecast --public: exit %d, %s %s", code, out, errs)
	}
	b, err := os.ReadFile(path("public.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := forecast.ReadPublicFile(bytes.NewReader(b), "public.csv")
	if err != nil {
		t.Fatal(err)
	}
	// The national total rises by 10 more cases each day of its last four weeks: other public
	// inputs, another file.
	changed := *pub
	changed.National = append([]float64(nil), pub.National...)
	n := len(changed.National)
	for i := n - 28; i < n; i++ {
		changed.National[i] += 10 * float64(i-(n-28))
	}
	var cb bytes.Buffer
	if err := forecast.WritePublicFile(&cb, &changed); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path("changed.csv"), cb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := fedcast(t, "forecast", "--model", model, "--data", path("a.csv"), "--public", path("changed.csv")); code == 0 || !strings.Contains(errs, "Use the file the study declares") {
		t.Errorf("forecast with another public file: exit %d, %s", code, errs)
	}
	f, err := os.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := session.ReadModelFile(f, model)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, err := series.ReadFile(path("a.csv"))
	if err != nil {
		t.Fatal(err)
	}
	same, err := session.WeeklyForecasts(*mf.Study, data, pub, mf.Weights)
	if err != nil {
		t.Fatal(err)
	}
	other, err := session.WeeklyForecasts(*mf.Study, data, &changed, mf.Weights)
	if err != nil {
		t.Fatal(err)
	}
	differ := false
	for i := range same {
		differ = differ || same[i].Point != other[i].Point
	}
	if !differ {
		t.Errorf("the released model's forecasts %v do not change with the public totals", same)
	}
}

// freeAddr returns a free local address for serve.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe runs `fedcast serve --study studyPath` on addr (state and an
// empty web directory in dir, extra flags after) until the test ends, and
// waits for it to listen.
func startServe(t *testing.T, ctx context.Context, studyPath, dir, addr string, extra ...string) {
	t.Helper()
	serveOut := &syncBuffer{}
	senv := &Env{Stdout: serveOut, Stderr: io.Discard, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	served := make(chan int, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() {
		served <- run(sctx, senv, append([]string{"serve", "--study", studyPath, "--state", filepath.Join(dir, "state"), "--addr", addr,
			"--web", filepath.Join(dir, "no-web"), "--log-level", "error"}, extra...))
	}()
	t.Cleanup(func() { stop(); <-served })
	for !strings.Contains(serveOut.String(), "fedcast coordinator") {
		select {
		case c := <-served:
			t.Fatalf("serve ended (exit %d):\n%s", c, serveOut.String())
		case <-ctx.Done():
			t.Fatal("serve did not start")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
