package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
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

// TestClientHub takes the demo study's seat with `fedcast client --hub` and
// checks the hub file it writes (every area of the seat's file, every
// level, only the hubverse columns) and its sidecar FILE.methods.csv (the
// method of each area). Then, the study finished, `client --forecast`
// reads the released model without training and writes it, and `fedcast
// forecast` gives the same forecast from that file offline.
func TestClientHub(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	demoOut := &syncBuffer{}
	env := &Env{Stdout: demoOut, Stderr: io.Discard, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	demoDone := make(chan int, 1)
	go func() {
		demoDone <- run(ctx, env, []string{"demo", "--addr", "127.0.0.1:0", "--state", state, "--campaigns", "1", "--lhas", "4", "--expected", "3",
			"--rounds", "3", "--epsilon", "3", "--round-length", "2s", "--start", "now", "--log-level", "error"})
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
	checkSidecar(t, hub+".methods.csv", d, out.String())
	checkForecastOnly(t, ctx, m[1], m[2])
	cancel()
	<-demoDone
}

// checkSidecar: one row per area in the hub file's order, the method in
// words, and the client's printed headline names the same method.
func checkSidecar(t *testing.T, path string, d *series.Dataset, printed string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) != 1+len(d.Regions) || strings.Join(rows[0], ",") != strings.Join(session.MethodsColumns, ",") {
		t.Fatalf("sidecar %v:\n%s", err, b)
	}
	for i, r := range rows[1:] {
		if r[0] != d.Regions[i].Name || (r[1] != "no change" && r[1] != "shared model") {
			t.Errorf("sidecar row %v", r)
		}
		if !strings.Contains(printed, "  "+r[0]+": ") || !regexp.MustCompile(regexp.QuoteMeta(r[0])+`: \S+ \(`+r[1]+`\) for `).MatchString(printed) {
			t.Errorf("printed headline of %s does not name %q:\n%s", r[0], r[1], printed)
		}
	}
}

// checkForecastOnly runs client --forecast on the finished study (nothing
// sent but the hello: no ready, no update) and fedcast forecast on the
// model file it writes: the same printed forecast.
func checkForecastOnly(t *testing.T, ctx context.Context, link, data string) {
	t.Helper()
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	code, online, errs := runEnv(ctx, "client", "--join", link, "--data", data, "--forecast", "--model", model)
	if code != 0 || !strings.Contains(errs, "nothing was sent but the hello") || strings.Contains(errs, "sent update") {
		t.Fatalf("client --forecast: exit %d\n%s\n%s", code, online, errs)
	}
	code, offline, errs := runEnv(ctx, "forecast", "--model", model, "--data", data, "--hub", filepath.Join(dir, "h.csv"))
	if code != 0 || offline != online || !strings.Contains(errs, "nothing is sent") {
		t.Fatalf("forecast: exit %d, %s\n%s\nclient --forecast printed:\n%s", code, errs, offline, online)
	}
	if _, err := os.Stat(filepath.Join(dir, "h.csv.methods.csv")); err != nil {
		t.Error(err)
	}
	// --issued keeps the forecasts issued, one row per area and week.
	issued := filepath.Join(dir, "issued.csv")
	for range 2 {
		if code, _, errs := runEnv(ctx, "forecast", "--model", model, "--data", data, "--issued", issued); code != 0 || !strings.Contains(errs, "recorded this forecast in") {
			t.Fatalf("forecast --issued: exit %d %s", code, errs)
		}
	}
	d, _ := series.ReadFile(data)
	if b, err := os.ReadFile(issued); err != nil || strings.Count(string(b), "\n") != 1+len(d.Regions) {
		t.Errorf("issued file (%v):\n%s", err, b)
	}
	checkPublishLater(t, ctx, link, data, model)
}

// checkPublishLater: after the study, `client --forecast` and `fedcast
// forecast` publish too (the weekly routine of an LHA whose study has
// finished): the first draws and marks the forecast to publish, the second
// returns the same numbers from the store.
func checkPublishLater(t *testing.T, ctx context.Context, link, data, model string) {
	t.Helper()
	dir := t.TempDir()
	store, hub := filepath.Join(dir, "published.json"), filepath.Join(dir, "p.csv")
	var files []string
	for i, args := range [][]string{{"client", "--join", link, "--data", data, "--forecast"}, {"forecast", "--model", model, "--data", data}} {
		code, out, errs := runEnv(ctx, append(args, "--publish-epsilon", "1", "--publish-store", store, "--publish-hub", hub)...)
		if code != 0 || !strings.Contains(out, "Published with differential privacy: ε = 0.9") || !strings.Contains(errs, "wrote the forecast to publish to "+hub) {
			t.Fatalf("%s --publish-epsilon: exit %d\n%s\n%s", args[0], code, out, errs)
		}
		if again := strings.Contains(out, "published before: the same numbers"); again != (i == 1) {
			t.Errorf("%s: said published before %v, want %v:\n%s", args[0], again, i == 1, out)
		}
		b, err := os.ReadFile(hub)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(b))
		if _, err := os.Stat(strings.TrimSuffix(hub, ".csv") + ".dp.json"); err != nil {
			t.Errorf("%s: no marking beside the hub file: %v", args[0], err)
		}
	}
	if files[0] != files[1] {
		t.Errorf("publishing the same day again gave other numbers:\n%s\n%s", files[0], files[1])
	}
}

func runEnv(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }}
	code := run(ctx, env, args)
	return code, out.String(), errb.String()
}

// fedcast forecast refuses a model file without the study's parameters or
// whose weights do not hash to its model_sha256, naming the file and field.
func TestForecastModelFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body, want string
	}{
		{"bare.json", `{"round":1,"layers":[2,1],"model_sha256":"x","weights":[1,2,3]}`, `bare.json has no "study" field`},
		{"hash.json", `{"round":1,"layers":[2,1],"model_sha256":"x","weights":[1,2,3],"study":{"layers":[2,1]}}`, `field "model_sha256" says x`},
		{"short.json", `{"round":1,"layers":[2,1],"model_sha256":"x","weights":[1],"study":{"layers":[2,1]}}`, `field "weights" has 1 numbers`},
		{"text.json", `round 1`, `text.json is not a model file`},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := fedcast(t, "forecast", "--model", p, "--data", "x.csv"); code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, %q; want %q", tc.name, code, errs, tc.want)
		}
	}
	if code, _, errs := fedcast(t, "forecast", "--data", "x.csv"); code != 2 || !strings.Contains(errs, "--model and --data are required") {
		t.Errorf("no model: exit %d, %q", code, errs)
	}
}

// --max-windows takes 0 (all) or a positive cap.
func TestClientMaxWindowsFlag(t *testing.T) {
	if code, _, errs := fedcast(t, "client", "--join", "http://127.0.0.1:1/join#x", "--data", "x.csv", "--max-windows", "-1"); code != 2 || !strings.Contains(errs, "--max-windows") {
		t.Errorf("negative cap: exit %d, %q", code, errs)
	}
}
