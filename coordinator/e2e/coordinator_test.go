package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/lhaconn"
	"github.com/fedcast/fedcast/coordinator/server"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/coordinator/web"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// coordinator is a live coordinator serving the built app, with simulated
// LHAs on every seat but the first (the browser's).
type coordinator struct {
	url     string
	file    *study.File
	secrets *study.Secrets
	srv     *server.Server
	sims    sync.WaitGroup
	simErrs chan error
}

// startCoordinator starts a study of n LHAs; LHA 0 is left for the browser,
// the others join at once with synthetic data through shared/session (the
// same code the browser runs, here natively).
func startCoordinator(t *testing.T, tmpl study.File, n int) *coordinator {
	t.Helper()
	return startCoordinatorWith(t, tmpl, n, nil)
}

// startCoordinatorWith is startCoordinator with engine options (research
// mode).
func startCoordinatorWith(t *testing.T, tmpl study.File, n int, opt *study.Options) *coordinator {
	t.Helper()
	app := webApp(t)
	names := []string{"Northfield & Southmoor (you)"}
	for i := 1; i < n; i++ {
		names = append(names, "Simulated LHA "+string(rune('A'+i-1)))
	}
	file, secrets, err := study.Create(study.CreateOptions{Template: tmpl, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := file.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := study.Open(file, raw, l.Store(), opt)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&server.Options{Engine: eng, Ledger: l, Static: web.Handler(app.Dir),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	c := &coordinator{url: hs.URL, file: file, secrets: secrets, srv: srv, simErrs: make(chan error, n)}
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
		hs.Close()
		l.Close()
	})

	data, _, err := synth.Generate(synth.Options{Areas: n - 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		one := &series.Dataset{Regions: []*series.Region{data.Regions[i-1]}}
		s, err := lhaconn.Join(ctx, hs.URL+"/join#"+secrets.LHAs[i], "", simOptions(t, file))
		if err != nil {
			t.Fatal(err)
		}
		c.sims.Add(1)
		go func() {
			defer c.sims.Done()
			defer s.Close()
			if err := s.Run(ctx, one, session.Observer{}); err != nil && ctx.Err() == nil {
				c.simErrs <- err
			}
		}()
	}
	return c
}

// joinURL is the browser seat's join link.
func (c *coordinator) joinURL() string { return c.url + "/join#" + c.secrets.LHAs[0] }

// adminGet fetches an admin endpoint and decodes its JSON into v.
func (c *coordinator) adminGet(t *testing.T, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.secrets.Admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// waitFinished waits for the coordinator to end the study.
func (c *coordinator) waitFinished(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.srv.PublicStatus().State == "finished" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the study did not finish within %v (status %+v)", d, c.srv.PublicStatus())
}
