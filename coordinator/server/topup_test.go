package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// A top-up through serve's store: a continuing study of 3 campaigns of 2
// rounds ends in its SQLite ledger; a top-up to ε = 3 with 2 campaigns is
// recorded there; the study opened again runs rounds 7–10 at the top-up's
// noise and ends again; the export lists every round with its campaign,
// the top-up, and ε spent within the new budget.
func TestTopUpThroughTheLedger(t *testing.T) {
	file, _, err := study.Create(study.CreateOptions{Names: lhaNames(3), Template: study.File{Settings: protocol.Settings{Epsilon: 2, Rounds: 6, Campaigns: 3,
		Every: study.Duration(time.Hour), ExpectedClients: 3, Hidden: []int{4}, LocalEpochs: 1, RoundLength: study.Duration(time.Minute)}}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := file.Marshal()
	path := filepath.Join(t.TempDir(), "ledger.db")
	seed := uint64(9)
	life := func(f func(eng *study.Engine)) {
		l, err := ledger.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		eng, err := study.Open(file, raw, l.Store(), &study.Options{InsecureSeed: &seed})
		if err != nil {
			t.Fatal(err)
		}
		f(eng)
	}
	runOut := func(eng *study.Engine) {
		for eng.Finished() == "" {
			if _, err := eng.Begin(nil); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Complete(); err != nil {
				t.Fatal(err)
			}
			if err := eng.Release(); err != nil {
				t.Fatal(err)
			}
		}
	}
	life(runOut)
	var c2 float64
	life(func(eng *study.Engine) {
		if eng.Finished() == "" || eng.Rounds() != 6 {
			t.Fatalf("before the top-up: finished %q after %d rounds", eng.Finished(), eng.Rounds())
		}
		tu, err := eng.TopUp(3, 2, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c2 = tu.NoiseMultiplier
	})
	life(func(eng *study.Engine) {
		if eng.Finished() != "" || eng.Study.Rounds != 10 {
			t.Fatalf("after the top-up: finished %q, %d rounds planned", eng.Finished(), eng.Study.Rounds)
		}
		runOut(eng)
	})
	l, err := ledger.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e, err := l.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Rounds) != 10 || len(e.TopUps) != 1 || e.Finished == nil {
		t.Fatalf("export: %d rounds, %d top-ups, finished %+v", len(e.Rounds), len(e.TopUps), e.Finished)
	}
	for _, r := range e.Rounds[6:] {
		if r.NoiseMultiplier != c2 || r.Campaign < 4 {
			t.Fatalf("added round %d: c=%v (top-up %v), campaign %d", r.Round, r.NoiseMultiplier, c2, r.Campaign)
		}
	}
	filter, _ := privacy.FilterEpsilon([]privacy.Event{{SampleRate: 1, NoiseMultiplier: e.Rounds[0].NoiseMultiplier, Rounds: 6},
		{SampleRate: 1, NoiseMultiplier: c2, Rounds: 4}}, file.Delta, e.TopUps[0].Order)
	if !(e.EpsilonSpent > 2 && e.EpsilonSpent <= filter && filter <= 3) {
		t.Fatalf("ε spent %v, under the filter %v, new budget 3", e.EpsilonSpent, filter)
	}
}
