package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
	"github.com/fedcast/fedcast/shared/synth"
)

// weeklyStudy is a study of the weekly design whose public inputs file
// (written here) lists the browser's areas (lha.csv) and the simulated
// LHAs' (synth seed 5, as startCoordinator's), with the sums of both as
// the national and state totals.
func weeklyStudy(t *testing.T, n int) study.File {
	t.Helper()
	own, err := series.ReadFile(fixture(t, "lha.csv"))
	if err != nil {
		t.Fatal(err)
	}
	sim, _, err := synth.Generate(synth.Options{Areas: n - 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	all := &series.Dataset{Regions: append(append([]*series.Region{}, own.Regions...), sim.Regions...)}
	states := map[string]string{}
	for i, r := range all.Regions {
		states[r.Name] = []string{"Bayern", "Hessen"}[i%2]
	}
	pub, err := forecast.NewPublicInputs(all, states, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := forecast.WritePublicFile(&b, pub); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "public.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	d := model.WeeklyDesign
	w := *d.Weekly
	f := study.File{Settings: protocol.Settings{Name: "Weekly test study", Epsilon: 3, Rounds: 2, ExpectedClients: n, Hidden: d.Hidden,
		Features: string(model.WeeklyTotal), Weekly: &w, History: w.Inputs(), Horizon: 7, Smoothing: "trailing",
		LearningRate: d.LearningRate, Damping: d.Damping, RoundLength: study.Duration(15 * time.Second)}}
	if err := f.DeclarePublic(path, "test totals", "test holidays"); err != nil {
		t.Fatal(err)
	}
	return f
}

// simOptions gives the simulated LHAs of a weekly study its public inputs
// (read from the declared file, as `fedcast client --public` does); nil
// otherwise.
func simOptions(t *testing.T, f *study.File) *session.Options {
	t.Helper()
	if f.Weekly == nil {
		return nil
	}
	for _, p := range f.PublicInputs {
		if p.Path == "" {
			continue
		}
		r, err := os.Open(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		pub, err := forecast.ReadPublicFile(r, p.Path)
		if err != nil {
			t.Fatal(err)
		}
		return &session.Options{Public: pub}
	}
	t.Fatal("a weekly study without a public file")
	return nil
}

// TestWeeklyStudyInTheBrowser: a study of the weekly design with a
// browser LHA and a simulated one. The page downloads the public inputs
// file by its hash, trains the weekly design with it, and forecasts the
// next 7 days under the guard.
func TestWeeklyStudyInTheBrowser(t *testing.T) {
	ctx := browser(t)
	c := startCoordinator(t, weeklyStudy(t, 2), 2)
	openJoinLink(t, ctx, c)
	if got := text(t, ctx, "#study"); !strings.Contains(got, "National and state case totals: test totals") {
		t.Errorf("study card: %q", got)
	}
	chooseAndJoin(t, ctx, fixture(t, "lha.csv"))
	c.waitFinished(t, 90*time.Second)
	within(t, ctx, 60*time.Second, "the final forecast", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	got := text(t, ctx, "#forecast")
	if !strings.Contains(got, "Northfield") || !strings.Contains(got, "no change") {
		t.Errorf("forecast: %q", got)
	}
	if st := c.srv.PublicStatus(); st.Round != 2 {
		t.Errorf("the coordinator released %d rounds", st.Round)
	}
	shotOf(t, ctx, "#forecast", "weekly-forecast")
}
