package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/helper"
	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// helperProc is a running `fedcast helper serve`.
type helperProc struct {
	cmd    *exec.Cmd
	paused chan int // rounds the test hook paused after
	exited chan struct{}
}

// leaderToken is the test studies' leader token (study.HelperRef.LeaderToken).
var leaderToken = study.NewToken()

func startHelper(t *testing.T, key, state, addr, pause string) *helperProc {
	t.Helper()
	cmd := exec.Command(binary(t), "helper", "serve", "--key", key, "--state", state, "--addr", addr)
	cmd.Env = append(os.Environ(), "FEDCAST_TEST_HELPER_PAUSE_AFTER_COMMIT="+pause)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &helperProc{cmd: cmd, paused: make(chan int, 10), exited: make(chan struct{})}
	up := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "fedcast helper on ") {
				close(up)
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var r int
			if _, err := fmt.Sscanf(sc.Text(), "TEST HOOK: helper paused after committing round %d", &r); err == nil {
				select {
				case p.paused <- r:
				default:
				}
			}
		}
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	select {
	case <-up:
	case <-p.exited:
		t.Fatal("fedcast helper serve exited")
	case <-time.After(60 * time.Second):
		t.Fatal("fedcast helper serve did not start within 60 s")
	}
	return p
}

func (p *helperProc) kill() {
	select {
	case <-p.exited:
	default:
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// TestHelperKill9BetweenCommitAndAnswer: the helper is SIGKILLed after
// committing a round's share and before answering, in every round. The
// restarted helper answers the leader's retry with the committed share
// (never a second, differently noised one), and its ledger holds each
// round once, with ε growing as the study's accountant says.
func TestHelperKill9BetweenCommitAndAnswer(t *testing.T) {
	dir := t.TempDir()
	keys, state := filepath.Join(dir, "keys"), filepath.Join(dir, "helper.state")
	if out, err := exec.Command(binary(t), "helper", "keygen", "--out", keys).CombinedOutput(); err != nil {
		t.Fatalf("helper keygen: %v\n%s", err, out)
	}
	pubBytes, _ := os.ReadFile(filepath.Join(keys, "helper.pub"))
	pub, err := secagg.ParsePublicFile("helper.pub", pubBytes)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	st := protocol.Study{Protocol: protocol.Version, Clients: 3,
		SampleRate: 1, NoiseMultiplier: 2, Params: 5,
		Helper: &protocol.Helper{URL: "http://" + addr, PublicKey: pub.Bytes(), LeaderTokenSHA256: study.HashToken(leaderToken)},
		Settings: protocol.Settings{Epsilon: 10, Delta: 1e-5, Rounds: 3, ExpectedClients: 3,
			ClipNorm: 0.5, LocalEpochs: 1, LearningRate: 0.001}}
	hash, _ := st.Hash()
	client := &helper.Client{URL: st.Helper.URL, Token: leaderToken}
	p := startHelper(t, filepath.Join(keys, "helper.key"), state, addr, "30s")
	for round := 1; round <= st.Rounds; round++ {
		var reps []*secagg.Report
		for i := range 3 {
			r, err := secagg.NewReport(pub, hash, round, uint32(i), []int64{1, -2, 3, 0, 5})
			if err != nil {
				t.Fatal(err)
			}
			reps = append(reps, r)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := client.Aggregate(context.Background(), &st, round, reps)
			errc <- err
		}()
		select {
		case r := <-p.paused:
			if r != round {
				t.Fatalf("paused after round %d, want %d", r, round)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: the helper did not reach its commit", round)
		}
		p.kill()
		if err := <-errc; !errors.Is(err, helper.ErrUnavailable) {
			t.Fatalf("round %d: the leader got %v from a killed helper", round, err)
		}
		p = startHelper(t, filepath.Join(keys, "helper.key"), state, addr, "30s")
		resp, err := client.Aggregate(context.Background(), &st, round, reps)
		if err != nil {
			t.Fatalf("round %d: retry after restart: %v", round, err)
		}
		if !resp.Repeated || len(resp.Kept) != 3 {
			t.Fatalf("round %d: the restarted helper computed a new share (repeated %v, kept %d)", round, resp.Repeated, len(resp.Kept))
		}
	}
	p.kill()
	out, err := exec.Command(binary(t), "ledger", "export", "--state", state).Output()
	if err != nil {
		t.Fatalf("ledger export: %v", err)
	}
	var e helper.Export
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Rounds) != st.Rounds {
		t.Fatalf("the helper's ledger holds %d rounds, want %d:\n%s", len(e.Rounds), st.Rounds, out)
	}
	for i, r := range e.Rounds {
		if r.Round != i+1 || r.Reports != 3 || (i > 0 && !(r.Epsilon > e.Rounds[i-1].Epsilon)) {
			t.Fatalf("ledger round %d: %+v", i+1, r)
		}
	}
}

// TestLeaderKill9WithHelper: the leader (fedcast serve) is SIGKILLed
// while the helper holds round 2's committed share (after its commit,
// before its answer). The restarted leader forwards the same report set
// for the reopened round (kept in its state directory), the helper
// answers with the committed share, and the study runs to its end: each
// ledger holds every round once, with the same ε, and no LHA got two
// models for a round.
func TestLeaderKill9WithHelper(t *testing.T) {
	const n, rounds = 4, 4
	dir := t.TempDir()
	keys, hstate := filepath.Join(dir, "keys"), filepath.Join(dir, "helper.state")
	if out, err := exec.Command(binary(t), "helper", "keygen", "--out", keys).CombinedOutput(); err != nil {
		t.Fatalf("helper keygen: %v\n%s", err, out)
	}
	haddr := freeAddr(t)
	hp := startHelper(t, filepath.Join(keys, "helper.key"), hstate, haddr, "1500ms")
	names, data := synthLHAs(t, n, 5)
	studyPath, tokens, _ := studyNew(t, dir, names, "--epsilon", "4", "--rounds", fmt.Sprint(rounds), "--epochs", "5",
		"--from", novFrom, "--to", novTo, "--round-length", "2s", "--helper", "http://"+haddr,
		"--helper-key", filepath.Join(keys, "helper.pub"))
	state := filepath.Join(dir, "state")
	addr := freeAddr(t)
	p := serve(t, studyPath, state, addr, nil)
	ctx, cancel := withTimeout(5 * time.Minute)
	defer cancel()
	lhas := startPool(t, ctx, p.base, names, tokens, data, 300*time.Millisecond)
	for r := 0; r != 2; {
		select {
		case r = <-hp.paused:
		case <-time.After(2 * time.Minute):
			t.Fatalf("the helper did not commit round 2\n%s", p.logs())
		}
	}
	p.kill() // the leader dies while the helper holds round 2's share
	p = serve(t, studyPath, state, addr, nil)
	if _, err := p.waitState(3*time.Minute, func(s serverStatus) bool { return s.State == protocol.StateFinished }); err != nil {
		t.Fatalf("%v\n%s", err, p.logs())
	}
	if err := lhas.wait(time.Minute); err != nil {
		t.Fatal(err)
	}
	p.stop()
	hp.kill()
	e := exportLedger(t, state, "")
	if len(e.Rounds) != rounds {
		t.Fatalf("the leader's ledger holds %d rounds, want %d", len(e.Rounds), rounds)
	}
	out, err := exec.Command(binary(t), "ledger", "export", "--state", hstate).Output()
	if err != nil {
		t.Fatalf("helper ledger export: %v", err)
	}
	var he helper.Export
	if err := json.Unmarshal(out, &he); err != nil {
		t.Fatal(err)
	}
	if len(he.Rounds) != rounds {
		t.Fatalf("the helper's ledger holds %d rounds, want %d:\n%s", len(he.Rounds), rounds, out)
	}
	for i, r := range e.Rounds {
		if !r.SecureAggregation || r.Epsilon != he.Rounds[i].Epsilon {
			t.Errorf("round %d: leader secure %v ε %v, helper ε %v", r.Round, r.SecureAggregation, r.Epsilon, he.Rounds[i].Epsilon)
		}
	}
	_, problems := lhas.checkAgainst(e)
	for _, pr := range problems {
		t.Error(pr)
	}
}
