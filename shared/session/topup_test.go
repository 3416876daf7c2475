package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/protocol"
)

// topUpStudies returns a continuing study of 3 campaigns of 2 rounds at
// ε = 2 and the same study topped up to ε = 3 with 2 more campaigns.
func topUpStudies(t *testing.T) (base, up protocol.Study, tu protocol.TopUp) {
	t.Helper()
	base = fakeStudy()
	base.Rounds, base.Campaigns, base.Every, base.Epsilon = 6, 3, protocol.Duration(time.Hour), 2
	c, err := privacy.NoiseMultiplier(2, base.Delta, base.SampleRate, 6)
	if err != nil {
		t.Fatal(err)
	}
	base.NoiseMultiplier = c
	tu, err = base.NewTopUp(3, 2, time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if up, err = base.Apply(tu); err != nil {
		t.Fatal(err)
	}
	return base, up, tu
}

// runTopUp plays a coordinator that releases the 6 planned rounds, drops
// the connection, is topped up, welcomes the LHA back with the top-up and
// samples it in round 7. It returns the rounds the LHA sat out, whether
// it sent an update for round 7, and the session.
func runTopUp(t *testing.T, base, up protocol.Study, maxEps float64) (skipped []Skip, trained bool, s *Session) {
	t.Helper()
	d := newPipeDialer()
	w := []float64{0.1, 0.2, 0.3, 0}
	var log []protocol.Event
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			c := coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: base, LHA: "Kreis A", State: protocol.StateRunning})
			for r := 1; r <= 6; r++ {
				res := released(base, r, w)
				log = append(log, res.Event)
				c.send(res)
			}
			if err := waitReady(c); err != nil { // the session is running
				return err
			}
			c.conn.Close(CloseAbort, "")
			c = coordinator{t, <-d.ends}
			c.send(&protocol.Welcome{Study: up, LHA: "Kreis A", State: protocol.StateRunning, Log: log})
			c.send(&protocol.RoundStart{Round: 7, TimeLeft: answerIn, Picked: true, Weights: w})
			if maxEps > 0 {
				for {
					m, err := c.recv()
					if err != nil {
						return err
					}
					if u, ok := m.(*protocol.Update); ok && u.Round == 7 && !u.Dummy {
						trained = true
						break
					}
				}
			}
			c.send(&protocol.Finished{Rounds: 6, Epsilon: log[5].Epsilon, Reason: "rounds", ModelSHA256: log[5].ModelSHA256})
			return nil
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Join(ctx, "https://coordinator.example/join#TOKEN", "", &Options{Dial: d.dial, MaxEpsilon: maxEps})
	if err != nil {
		t.Fatal(err)
	}
	x, y := windows()
	if err := s.RunWindows(ctx, x, y, Observer{Skipped: func(k Skip) { skipped = append(skipped, k) }}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return skipped, trained, s
}

// An LHA that agreed to ε = 2 accepts the top-up to ε = 3 (it now shows
// the new budget and rounds) but sits out the added round: its limit is
// the budget it agreed to. With its own limit of 5 it trains in it.
func TestSessionTopUpAndOwnLimit(t *testing.T) {
	base, up, _ := topUpStudies(t)
	skipped, trained, s := runTopUp(t, base, up, 0)
	if st := s.Study(); st.Epsilon != 3 || st.Rounds != 10 || len(st.TopUps) != 1 {
		t.Fatalf("after the top-up the session shows ε=%v, %d rounds, %d top-ups", st.Epsilon, st.Rounds, len(st.TopUps))
	}
	if trained || len(skipped) != 1 || skipped[0].Round != 7 || skipped[0].Limit != 2 || !(skipped[0].Epsilon > 2) {
		t.Fatalf("without its own limit: trained %v, skipped %+v; want round 7 sat out at limit 2", trained, skipped)
	}
	skipped, trained, _ = runTopUp(t, base, up, 5)
	if !trained || len(skipped) != 0 {
		t.Fatalf("with its own limit 5: trained %v, skipped %+v", trained, skipped)
	}
}

// A welcome whose parameters changed other than by a valid top-up is
// refused; a study first seen topped up is checked against its filter.
func TestSessionRefusesForgedTopUp(t *testing.T) {
	base, up, tu := topUpStudies(t)
	forged := up
	forged.NoiseMultipliers = append([]float64(nil), up.NoiseMultipliers...)
	forged.NoiseMultipliers[9] *= 0.5 // less noise in the last added round than the top-up calibrated
	s := &Session{study: base, agreed: base}
	if err := s.acceptStudy(forged); !errors.Is(err, ErrBadStudy) {
		t.Fatalf("forged schedule: %v, want ErrBadStudy", err)
	}
	cheap := tu
	cheap.NoiseMultiplier *= 0.8
	bad, _ := base.Apply(tu)
	bad.TopUps[0] = cheap
	if err := s.acceptStudy(bad); !errors.Is(err, ErrBadStudy) {
		t.Fatalf("under-noised top-up: %v, want ErrBadStudy", err)
	}
	if err := s.acceptStudy(up); err != nil || s.Study().Epsilon != 3 {
		t.Fatalf("valid top-up: %v, ε %v", err, s.Study().Epsilon)
	}
	if err := checkFirstTopUps(up); err != nil {
		t.Fatalf("first welcome of a topped-up study: %v", err)
	}
	forged.TopUps = up.TopUps
	if err := checkFirstTopUps(forged); err == nil {
		t.Fatal("a first welcome whose rounds compose above its budget was accepted")
	}
}

// waitReady reads the session's frames until its ready.
func waitReady(c coordinator) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		k, b, err := c.conn.Read(ctx, protocol.FrameSize(1<<10))
		if err != nil {
			return err
		}
		if m, err := protocol.Decode(k, b); err == nil {
			if _, ok := m.(*protocol.Ready); ok {
				return nil
			}
		}
	}
}
