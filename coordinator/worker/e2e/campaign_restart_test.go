package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestCampaignRestartOnWorkerd: workerd is killed in the middle of a
// continuing study's first campaign and started again on the same
// storage. The rest of the first campaign runs in that campaign's window
// and the second campaign opens at its planned start, so the study ends
// when planned: t₀ + every + 2·L. (Before, the first campaign's rest took
// the second campaign's slots and the study ended one campaign later.)
func TestCampaignRestartOnWorkerd(t *testing.T) {
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := []string{"A", "B", "C"}
	const L, every = 3 * time.Second, 30 * time.Second
	s := newStudy(t, names, addr, "--epsilon", "4", "--campaigns", "2", "--every", every.String(), "--rounds", "2",
		"--round-length", L.String(), "--quorum", "3", "--expected", "3")
	storage, web := filepath.Join(s.dir, "do"), filepath.Join(s.dir, "web")
	w := startWorkerd(t, bin, s.raw, addr, storage, web)
	clients := startClients(t, s, names)
	st := w.waitStatus(60*time.Second, func(st protocol.Status) bool { return st.Round >= 1 })
	if st.Schedule == nil || st.Schedule.Start == nil {
		t.Fatalf("status after round 1 has no schedule start: %+v", st)
	}
	t0 := *st.Schedule.Start
	w.kill()
	killed := time.Since(t0)
	if killed >= every-2*L {
		t.Fatalf("workerd was killed %v after the start, too late in the first campaign's window for this test (the status showed round 1 that late)", killed)
	}

	w2 := startWorkerd(t, bin, s.raw, addr, storage, web)
	finishAll(t, clients, names, 4)
	end := w2.waitStatus(10*time.Second, func(st protocol.Status) bool { return st.State == protocol.StateFinished })
	if end.AsOf == nil || end.Round != 4 {
		t.Fatalf("final status: %+v", end)
	}
	took := end.AsOf.Sub(t0)
	if want := every + 2*L; took != want {
		t.Errorf("killed %v after the start: the study ended %v after it, want the planned %v", killed.Round(time.Millisecond), took, want)
	}
	if want := accountantEpsilon(t, end, "", 4); end.EpsilonSpent != want {
		t.Errorf("final ε %v, the accountant gives %v", end.EpsilonSpent, want)
	}
	t.Logf("workerd killed %v after the start (round 1 released); the study ended at t₀ + %v", killed.Round(time.Millisecond), took)
}
