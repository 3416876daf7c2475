package e2e

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// TestTwoServersInTheBrowser: the page in Chromium takes part in a study
// with a helper (two-server secure aggregation) beside two headless LHAs:
// it names both servers with the helper's fingerprint and the collusion
// caveat, sends one report per round, says whether it was picked never
// leaves the computer, shows both ε, and the study completes with the
// helper's ledger holding every round.
func TestTwoServersInTheBrowser(t *testing.T) {
	ctx := browser(t)
	key, err := secagg.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	hstate := t.TempDir()
	h, err := helper.New(key, hstate, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h.Handler())
	t.Cleanup(func() { hs.Close(); h.Close() })
	design := model.Default
	const rounds = 2
	c := startCoordinator(t, study.File{Helper: &study.HelperRef{URL: hs.URL, PublicKey: key.PublicKey().Bytes(), Operator: "Helper e.V."},
		Settings: protocol.Settings{Name: "Two servers", Epsilon: 3, Rounds: rounds, ExpectedClients: 3,
			Hidden: design.Hidden, Features: string(design.Features), LearningRate: design.LearningRate, Damping: design.Damping,
			RoundLength: study.Duration(8 * time.Second)}}, 3)
	openJoinLink(t, ctx, c)
	who := text(t, ctx, "#two-servers")
	for _, want := range []string{"Helper e.V.", key.PublicKey().Fingerprint(), "never share their data with each other"} {
		if !strings.Contains(who, want) {
			t.Errorf("'Who sees what' lacks %q:\n%s", want, who)
		}
	}
	if card := text(t, ctx, "#study"); !strings.Contains(card, "Every round, picked or not: one report of") || strings.Contains(card, "Only when you are picked") {
		t.Errorf("the study card does not say that a report goes every round:\n%s", card)
	}
	chooseAndJoin(t, ctx, fixture(t, "lha.csv"))
	within(t, ctx, 180*time.Second, "training to the end", chromedp.WaitVisible(chromedp.CSS("#forecast .forecast-value")))
	c.waitFinished(t, 30*time.Second)
	shot(t, ctx, "two-servers")
	sent := text(t, ctx, "#sent-log")
	for _, want := range []string{"report", "never leaves this computer", "sealed key", "at most"} {
		if !strings.Contains(sent, want) {
			t.Errorf("'What left this computer' lacks %q:\n%s", want, sent)
		}
	}
	if got := text(t, ctx, "#epsilon-two"); !strings.Contains(got, "either server on its own: ε = ") || !strings.Contains(got, "Against everyone else") {
		t.Errorf("budget card: %q", got)
	}
	e, err := helper.ExportLedger(hstate, "")
	if err != nil || len(e.Rounds) != rounds {
		t.Fatalf("helper ledger: %v, %+v", err, e)
	}
}
