package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/fedcast/fedcast/shared/protocol"
)

// TestLoad is the load experiment of docs/deploy-cloudflare.md, run only
// when asked for: FEDCAST_WORKER_LOAD=N runs a study of the paper's model
// (11 777 weights) with N lightweight LHAs, every LHA sampled every round
// (m = N), FEDCAST_WORKER_ROUNDS rounds (default 3) of
// FEDCAST_WORKER_ROUND_LENGTH (default 30s), through workerd. The LHAs do
// not train: each answers its round_start at once with a random update of
// norm below S, so that the figures are the worker's. It reports the
// per-update latency (update frame → acknowledgement) in the burst of a
// round's opening, how late each round_result came after its release
// tick, workerd's peak memory, and the stored state's size.
func TestLoad(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FEDCAST_WORKER_LOAD"))
	if n <= 0 {
		t.Skip("the load experiment runs only with FEDCAST_WORKER_LOAD=N (docs/deploy-cloudflare.md)")
	}
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("FEDCAST_WORKER_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	length := "30s"
	if l := os.Getenv("FEDCAST_WORKER_ROUND_LENGTH"); l != "" {
		length = l
	}
	bin := workerdPath(t)
	addr := freeAddr(t)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("LHA %04d", i+1)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "study.json")
	out, err := execOut(fedcastBin, "study", "new", "--names", strings.Join(names, ","), "--out", path, "--addr", addr,
		"--preset", "paper", "--epsilon", "8", "--rounds", strconv.Itoa(rounds), "--expected", strconv.Itoa(n), "--round-length", length)
	if err != nil {
		t.Fatalf("study new: %v\n%s", err, out)
	}
	var links []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[len(f)-1], "/join#") {
			links = append(links, f[len(f)-1])
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := startWorkerd(t, bin, raw, addr, filepath.Join(dir, "do"), filepath.Join(dir, "web"))
	idle := memory(w, "VmRSS:")

	type lhaStats struct {
		acks     []time.Duration
		lateness []time.Duration // round_result arrival − release tick
		results  int
		finished bool
	}
	stats := make([]lhaStats, n)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	connStart := time.Now()
	var connected sync.WaitGroup
	connected.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &stats[i]
			link := links[i]
			ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/api/ws", &websocket.DialOptions{Subprotocols: protocol.Subprotocols(link[strings.Index(link, "#")+1:])})
			if err != nil {
				connected.Done()
				t.Errorf("LHA %d: dial: %v", i, err)
				return
			}
			defer ws.CloseNow()
			ws.SetReadLimit(64 << 20)
			if err := ws.Write(ctx, websocket.MessageText, []byte(`{"v":1,"type":"ready"}`)); err != nil {
				connected.Done()
				t.Errorf("LHA %d: ready: %v", i, err)
				return
			}
			connected.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			var sent time.Time
			for {
				typ, b, err := ws.Read(ctx)
				if err != nil {
					if !st.finished {
						t.Errorf("LHA %d: read: %v", i, err)
					}
					return
				}
				k := protocol.Text
				if typ == websocket.MessageBinary {
					k = protocol.Binary
				}
				m, err := protocol.Decode(k, b)
				if err != nil {
					t.Errorf("LHA %d: %v", i, err)
					return
				}
				switch m := m.(type) {
				case *protocol.RoundStart:
					u := make([]float64, len(m.Weights))
					for j := range u {
						u[j] = (rng.Float64() - 0.5) * 1e-3
					}
					if !m.Picked {
						clear(u) // every LHA answers: the unpicked with a dummy
					}
					_, ub, err := protocol.Encode(&protocol.Update{Round: m.Round, Dummy: !m.Picked, Weights: u})
					if err != nil {
						t.Errorf("LHA %d: %v", i, err)
						return
					}
					sent = time.Now()
					if err := ws.Write(ctx, websocket.MessageBinary, ub); err != nil {
						t.Errorf("LHA %d: update: %v", i, err)
						return
					}
				case *protocol.Accepted:
					if !sent.IsZero() {
						st.acks = append(st.acks, time.Since(sent))
						sent = time.Time{}
					}
				case *protocol.RoundResult:
					// The release tick is the next round's opening (the
					// last round's result carries none).
					if m.Schedule != nil && m.Schedule.Opens != nil {
						st.lateness = append(st.lateness, time.Since(*m.Schedule.Opens))
					}
					st.results++
				case *protocol.Finished:
					st.finished = true
					ws.Close(websocket.StatusNormalClosure, "")
					return
				case *protocol.Error:
					t.Errorf("LHA %d: error %s: %s", i, m.Code, m.Message)
				}
			}
		}()
	}
	connected.Wait()
	connTook := time.Since(connStart)
	wg.Wait()
	var acks, late []time.Duration
	done := 0
	for _, st := range stats {
		acks = append(acks, st.acks...)
		late = append(late, st.lateness...)
		if st.finished && st.results == rounds {
			done++
		}
	}
	slices.Sort(acks)
	slices.Sort(late)
	pct := func(d []time.Duration, p int) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, len(d)*p/100)].Round(100 * time.Microsecond)
	}
	var adm struct {
		Participation []protocol.Participation `json:"participation"`
	}
	var admin string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Admin API: Authorization: Bearer ") {
			admin = strings.TrimPrefix(line, "Admin API: Authorization: Bearer ")
		}
	}
	if err := w.get("/api/admin/status", admin, &adm); err != nil {
		t.Fatal(err)
	}
	var state []byte
	var rawState jsonBytes
	if err := w.get("/api/admin/state", admin, &rawState); err == nil {
		state = rawState
	}
	t.Logf("load: %d LHAs (paper model, m = N, %d rounds of %s): connected in %s; %d finished with every round",
		n, rounds, length, connTook.Round(time.Millisecond), done)
	t.Logf("per-update latency (update → acknowledgement, %d updates, in the burst at each opening): median %s, p90 %s, p99 %s, max %s",
		len(acks), pct(acks, 50), pct(acks, 90), pct(acks, 99), pct(acks, 100))
	t.Logf("round_result after its release tick (%d results): median %s, p90 %s, max %s", len(late), pct(late, 50), pct(late, 90), pct(late, 100))
	for _, p := range adm.Participation {
		t.Logf("round %d: sampled %d, received %d, rejected %d, open → commit %s", p.Round, p.Sampled, p.Received, p.Rejected, p.Duration)
	}
	t.Logf("stored state %d bytes; workerd memory: %s resident with the study loaded and no LHA, peak %s", len(state), idle, memory(w, "VmHWM:"))
	if done != n {
		t.Errorf("%d of %d LHAs saw every round and the finish", done, n)
	}
	goMem := "unknown"
	for _, line := range strings.Split(w.log.String(), "\n") {
		if mem, ok := strings.CutPrefix(line, "Go program memory: "); ok {
			goMem, _, _ = strings.Cut(mem, " (")
		}
	}
	t.Logf("the Go program's linear memory at its peak: %s", goMem)
	if strings.Contains(w.log.String(), "overran") {
		t.Logf("workerd log:\n%s", w.log)
	}
}

// jsonBytes keeps a JSON value's bytes.
type jsonBytes []byte

func (j *jsonBytes) UnmarshalJSON(b []byte) error { *j = append((*j)[:0], b...); return nil }

func execOut(name string, args ...string) (string, error) {
	var b logBuf
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// memory reads a field (VmRSS:, VmHWM:) of workerd's /proc status.
func memory(w *workerd, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.cmd.Process.Pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			return strings.TrimSpace(strings.TrimPrefix(line, field))
		}
	}
	return "unknown"
}
