package study

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedcast/fedcast/shared/privacy"
)

// A study file naming the PLD accountant is calibrated, gated, logged and
// resumed with it; an unknown accountant is refused with the field named.
func TestStudyAccountantPLD(t *testing.T) {
	f, _, _ := small(t, 4)
	if f.AccountantKind() != privacy.AccountantRDP || strings.Contains(string(must(f.Marshal())), `"accountant"`) {
		t.Fatalf("default accountant %q", f.AccountantKind())
	}
	crdp, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	f.Accountant = privacy.AccountantPLD
	cpld, err := f.Calibrate()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := privacy.PLDNoiseMultiplier(f.Epsilon, f.Delta, f.SampleRate(), f.Rounds); cpld != want || !(cpld < crdp) {
		t.Errorf("PLD calibration c=%g (want %g, below RDP's %g)", cpld, want, crdp)
	}
	raw := must(f.Marshal())
	if !strings.Contains(string(raw), `"accountant": "pld"`) {
		t.Fatalf("accountant not written: %s", raw)
	}
	g, err := Parse(raw)
	if err != nil || g.AccountantKind() != privacy.AccountantPLD {
		t.Fatalf("parse: %v, %q", err, g.Accountant)
	}
	if pub := g.Public(cpld, false); pub.Accountant != "pld" {
		t.Errorf("public study accountant %q", pub.Accountant)
	}

	path := filepath.Join(t.TempDir(), "l.db")
	e := openEngine(t, g, raw, path, nil)
	for range 2 {
		if _, err := e.Begin(nil); err != nil {
			t.Fatal(err)
		}
		res, err := commit(e)
		if err != nil {
			t.Fatal(err)
		}
		if res.Event.Accountant != "pld" {
			t.Errorf("event accountant %q", res.Event.Accountant)
		}
	}
	want, _ := privacy.EpsilonFor(privacy.AccountantPLD, []privacy.Event{{SampleRate: g.SampleRate(), NoiseMultiplier: cpld, Rounds: 2}}, g.Delta)
	if e.EpsilonSpent() != want {
		t.Errorf("spent ε=%g, PLD gives %g", e.EpsilonSpent(), want)
	}
	var exp struct{ Accountant string }
	b, err := LedgerExportForTest(path)
	if err != nil || json.Unmarshal(b, &exp) != nil || exp.Accountant != "pld" {
		t.Errorf("ledger export accountant %q (%v)", exp.Accountant, err)
	}
	ledgerOf(e).Close()
	// Resuming recomputes every recorded ε with the study's accountant.
	r, err := Open(g, raw, openLedger(t, path), nil)
	if err != nil {
		t.Fatalf("resume a PLD study: %v", err)
	}
	if r.EpsilonSpent() != want || len(r.Events()) != 2 || r.Events()[1].Accountant != "pld" {
		t.Errorf("resumed: ε=%g, log %+v", r.EpsilonSpent(), r.Events())
	}

	bad := strings.Replace(string(raw), `"accountant": "pld"`, `"accountant": "moments"`, 1)
	if _, err := Parse([]byte(bad)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "accountant") {
		t.Errorf("unknown accountant: %v", err)
	}
}
