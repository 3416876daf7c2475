package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fedcast/fedcast/coordinator/ledger"
	"github.com/fedcast/fedcast/coordinator/server"
	"github.com/fedcast/fedcast/internal/testkit"
)

// fedcastBin is the binary built by TestMain ("" if the build failed;
// buildErr says why).
var fedcastBin, buildErr = "", error(nil)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fedcast-acceptance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "fedcast")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/fedcast/fedcast/coordinator/cmd/fedcast")
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build fedcast: %v\n%s", err, out)
	} else {
		fedcastBin = bin
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// full reports whether the long experiments were asked for.
func full() bool { return os.Getenv("FEDCAST_ACCEPTANCE") == "1" }

func binary(t *testing.T) string {
	t.Helper()
	if fedcastBin == "" {
		t.Fatalf("no fedcast binary: %v", buildErr)
	}
	return fedcastBin
}

// writeResult stores a test's measurements as JSON in
// $FEDCAST_ACCEPTANCE_OUT/name.json (when set) and logs them.
func writeResult(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", name, b)
	if dir := os.Getenv("FEDCAST_ACCEPTANCE_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// studyNew runs `fedcast study new` with names and extra flags and returns
// the study file's path, the join tokens (in enrolment order) and the admin
// token, parsed from the command's output.
func studyNew(t *testing.T, dir string, names []string, flags ...string) (path string, tokens []string, admin string) {
	t.Helper()
	path = filepath.Join(dir, "study.json")
	args := append([]string{"study", "new", "--names", strings.Join(names, ","), "--out", path}, flags...)
	out, err := exec.Command(binary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("fedcast study new: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		link := f[len(f)-1]
		switch {
		case strings.Contains(link, "/join#"):
			tokens = append(tokens, link[strings.Index(link, "#")+1:])
		case strings.HasPrefix(line, "Admin API: Authorization: Bearer "):
			admin = link
		}
	}
	if len(tokens) != len(names) || admin == "" {
		t.Fatalf("study new printed %d join links for %d LHAs (admin token %t):\n%s", len(tokens), len(names), admin != "", out)
	}
	return path, tokens, admin
}

// freeAddr returns a loopback address with a port that was free a moment
// ago; the coordinator keeps it across restarts so that clients can
// reconnect to the same URL.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is one running `fedcast serve` child process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT

	mu     sync.Mutex
	log    []string
	hooks  chan string // TEST HOOK lines
	exited chan struct{}
	err    error
}

// serve starts `fedcast serve` and waits until it listens. env adds
// environment variables (e.g. the test hook).
func serve(t *testing.T, study, state, addr string, seed *uint64, env ...string) *proc {
	t.Helper()
	args := []string{"serve", "--study", study, "--state", state, "--addr", addr, "--web", filepath.Join(t.TempDir(), "no-web")}
	if seed != nil {
		args = append(args, "--insecure-seed", fmt.Sprint(*seed))
	}
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, hooks: make(chan string, 1000), exited: make(chan struct{})}
	addrc := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, " on http://"); i >= 0 && strings.HasPrefix(line, "fedcast coordinator") {
				u := strings.Fields(line[i+4:])[0]
				select {
				case addrc <- u:
				default:
				}
			}
			p.append(line)
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "TEST HOOK: paused") {
				select {
				case p.hooks <- line:
				default:
				}
			}
			p.append(line)
		}
	}()
	go func() {
		wg.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case p.base = <-addrc:
	case <-p.exited:
		t.Fatalf("fedcast serve exited: %v\n%s", p.err, p.logs())
	case <-time.After(60 * time.Second):
		p.kill()
		t.Fatalf("fedcast serve did not start within 60 s\n%s", p.logs())
	}
	return p
}

func (p *proc) append(line string) {
	p.mu.Lock()
	p.log = append(p.log, line)
	p.mu.Unlock()
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, "\n")
}

// kill SIGKILLs the process (if it still runs) and waits for it.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.t.Errorf("fedcast serve (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// stop sends SIGTERM (graceful shutdown) and waits.
func (p *proc) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("no exit within 30 s of SIGTERM")
	}
}

// status reads GET /api/status.
func (p *proc) status() (server.Status, error) {
	var st server.Status
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(p.base + "/api/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// adminStatus reads GET /api/admin/status.
func (p *proc) adminStatus(admin string) (server.AdminStatus, error) {
	var st server.AdminStatus
	req, _ := http.NewRequest("GET", p.base+"/api/admin/status", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return st, fmt.Errorf("admin status %d: %s", resp.StatusCode, b)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// waitState polls the public status until cond holds or timeout passes.
func (p *proc) waitState(timeout time.Duration, cond func(server.Status) bool) (server.Status, error) {
	end := time.Now().Add(timeout)
	var st server.Status
	var err error
	for time.Now().Before(end) {
		select {
		case <-p.exited:
			return st, fmt.Errorf("fedcast serve exited: %v", p.err)
		default:
		}
		st, err = p.status()
		if err == nil && cond(st) {
			return st, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return st, fmt.Errorf("timed out after %v (last status %+v, err %v)", timeout, st, err)
}

// exportLedger runs `fedcast ledger export --state state` (and --model).
func exportLedger(t *testing.T, state, model string) *ledger.Export {
	t.Helper()
	args := []string{"ledger", "export", "--state", state}
	if model != "" {
		args = append(args, "--model", model)
	}
	cmd := exec.Command(binary(t), args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("fedcast ledger export: %v\n%s", err, stderr)
	}
	var e ledger.Export
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("ledger export is not JSON: %v", err)
	}
	return &e
}

// exportedModel is the --model file of `fedcast ledger export`.
type exportedModel struct {
	Round       int       `json:"round"`
	Final       bool      `json:"final"`
	ModelSHA256 string    `json:"model_sha256"`
	Weights     []float64 `json:"weights"`
}

func readModel(t *testing.T, path string) exportedModel {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m exportedModel
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// dataDir returns ../shared/data (or skips).
func dataDir(t *testing.T) string { return testkit.DataDir(t) }

// withTimeout is context.WithTimeout on Background.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// serverStatus is the public status JSON.
type serverStatus = server.Status
