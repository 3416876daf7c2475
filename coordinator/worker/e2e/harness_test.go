package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedcast/fedcast/internal/testkit"
	"github.com/fedcast/fedcast/shared/protocol"
)

// Built once by TestMain: the fedcast binary and the worker bundle
// (app.wasm, wasm_exec.js, worker.mjs, workerd.capnp), as `make worker`
// builds it.
var (
	fedcastBin, bundleDir string
	buildErr              error
	// wasmSize is the worker's app.wasm size in bytes, raw.
	wasmSize int64
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fedcast-worker-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildErr = build(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

func build(dir string) error {
	root := testkit.RepoRoot()
	if root == "" {
		return fmt.Errorf("no module root")
	}
	fedcastBin = filepath.Join(dir, "fedcast")
	if err := run(root, nil, "go", "build", "-o", fedcastBin, "./coordinator/cmd/fedcast"); err != nil {
		return err
	}
	bundleDir = filepath.Join(dir, "worker")
	wasm := filepath.Join(bundleDir, "app.wasm")
	if err := run(root, []string{"GOOS=js", "GOARCH=wasm"}, "go", "build", "-trimpath", "-ldflags=-s", "-o", wasm, "./coordinator/worker"); err != nil {
		return err
	}
	fi, err := os.Stat(wasm)
	if err != nil {
		return err
	}
	wasmSize = fi.Size()
	assets := filepath.Join(dir, "assets")
	if err := run(root, nil, "go", "run", "github.com/syumai/workers/cmd/workers-assets-gen", "-mode", "go", "-o", assets); err != nil {
		return err
	}
	for src, dst := range map[string]string{
		filepath.Join(assets, "wasm_exec.js"):                   "wasm_exec.js",
		filepath.Join(root, "coordinator/worker/js/worker.mjs"): "worker.mjs",
		filepath.Join(root, "coordinator/worker/workerd.capnp"): "workerd.capnp",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(bundleDir, dst), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// workerdPath returns the pinned workerd (coordinator/worker/node_modules,
// installed by `npm ci` there: .ci/run does it), or skips (fails in CI).
func workerdPath(t *testing.T) string {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("building the worker: %v", buildErr)
	}
	p := filepath.Join(testkit.RepoRoot(), "coordinator", "worker", "node_modules", ".bin", "workerd")
	if _, err := os.Stat(p); err != nil {
		testkit.Missing(t, "workerd is not installed: run `npm ci` in coordinator/worker")
	}
	return p
}

// freeAddr returns a loopback address whose port was free a moment ago;
// workerd keeps it across restarts so that clients reconnect to it.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// logBuf collects a child's output for the test's failure messages.
type logBuf = testkit.SyncBuffer

// workerd is one running workerd child process serving the worker.
type workerd struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	log    *logBuf
	exited chan struct{}
}

// startWorkerd runs the worker with study file studyJSON on addr, its
// Durable Object storage in storage and the browser app from web, and
// waits until /api/status answers.
func startWorkerd(t *testing.T, bin string, studyJSON []byte, addr, storage, web string) *workerd {
	t.Helper()
	for _, d := range []string{storage, web} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "serve", filepath.Join(bundleDir, "workerd.capnp"),
		"--socket-addr", "http="+addr,
		"--directory-path", "web="+web,
		"--directory-path", "do-storage="+storage)
	cmd.Env = append(os.Environ(), "FEDCAST_STUDY="+string(studyJSON))
	w := &workerd{t: t, cmd: cmd, base: "http://" + addr, log: &logBuf{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(w.exited) }()
	t.Cleanup(w.kill)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := w.status(); err == nil {
			return w
		}
		select {
		case <-w.exited:
			t.Fatalf("workerd exited: %s", w.log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("workerd did not answer within 60 s:\n%s", w.log)
		}
	}
}

// kill ends workerd with SIGKILL (as a crash would) and waits for it.
func (w *workerd) kill() {
	select {
	case <-w.exited:
		return
	default:
	}
	w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

func (w *workerd) get(path, admin string, v any) error {
	req, err := http.NewRequest(http.MethodGet, w.base+path, nil)
	if err != nil {
		return err
	}
	if admin != "" {
		req.Header.Set("Authorization", "Bearer "+admin)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, res.Status, b)
	}
	return json.Unmarshal(b, v)
}

func (w *workerd) status() (protocol.Status, error) {
	var st protocol.Status
	err := w.get("/api/status", "", &st)
	return st, err
}

// waitStatus polls the public status until cond holds.
func (w *workerd) waitStatus(timeout time.Duration, cond func(protocol.Status) bool) protocol.Status {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	var st protocol.Status
	var err error
	for time.Now().Before(deadline) {
		if st, err = w.status(); err == nil && cond(st) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("status did not reach the condition within %s: last %+v (err %v)\nworkerd:\n%s", timeout, st, err, w.log)
	return st
}

// storedState is the part of the admin state the tests read.
type storedState struct {
	Events []protocol.Event `json:"events"`
	Model  []float64        `json:"model"`
}

// study is a study file written by `fedcast study new` with its tokens.
type study struct {
	path   string
	raw    []byte
	links  []string // join links, in enrolment order
	admin  string
	data   []string // one synthetic case CSV per LHA
	dir    string
	params int
}

// newStudy writes a study of the named LHAs (extra flags for `study new`)
// and a synthetic case file for each.
func newStudy(t *testing.T, names []string, addr string, flags ...string) *study {
	t.Helper()
	dir := t.TempDir()
	s := &study{path: filepath.Join(dir, "study.json"), dir: dir}
	args := append([]string{"study", "new", "--names", strings.Join(names, ","), "--out", s.path, "--addr", addr}, flags...)
	out, err := exec.Command(fedcastBin, args...).CombinedOutput()
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
			s.links = append(s.links, link)
		case strings.HasPrefix(line, "Admin API: Authorization: Bearer "):
			s.admin = link
		}
	}
	if len(s.links) != len(names) || s.admin == "" {
		t.Fatalf("study new printed %d join links for %d LHAs:\n%s", len(s.links), len(names), out)
	}
	if s.raw, err = os.ReadFile(s.path); err != nil {
		t.Fatal(err)
	}
	for i := range names {
		p := filepath.Join(dir, fmt.Sprintf("lha%d.csv", i))
		out, err := exec.Command(fedcastBin, "data", "synth", "--areas", "3", "--days", "92", "--seed", fmt.Sprint(i+1), "--out", p).CombinedOutput()
		if err != nil {
			t.Fatalf("fedcast data synth: %v\n%s", err, out)
		}
		s.data = append(s.data, p)
	}
	return s
}

// client is one running `fedcast client`.
type client struct {
	cmd   *exec.Cmd
	log   *logBuf
	model string
	done  chan error
}

func startClient(t *testing.T, s *study, i int, flags ...string) *client {
	t.Helper()
	c := &client{log: &logBuf{}, model: filepath.Join(s.dir, fmt.Sprintf("model%d.json", i)), done: make(chan error, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	args := append([]string{"client", "--join", s.links[i], "--data", s.data[i], "--model", c.model}, flags...)
	c.cmd = exec.CommandContext(ctx, fedcastBin, args...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	if err := c.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait(); cancel() }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
	})
	return c
}

// wait waits for the client to exit and returns its output.
func (c *client) wait(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("fedcast client: %v\n%s", err, c.log)
		}
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		t.Fatalf("fedcast client did not finish within %s:\n%s", timeout, c.log)
	}
	return c.log.String()
}

// modelFile is the --model file of `fedcast client`.
type modelFile struct {
	Weights []float64 `json:"weights"`
}

// startClients starts one `fedcast client` per LHA of s.
func startClients(t *testing.T, s *study, names []string) []*client {
	t.Helper()
	clients := make([]*client, len(names))
	for i := range names {
		clients[i] = startClient(t, s, i)
	}
	return clients
}

// finishAll waits for every client to report the finish after rounds
// rounds (or turns) with ε equal to its own recomputation, and returns
// the final model's hash, the same for all.
func finishAll(t *testing.T, clients []*client, names []string, rounds int) string {
	t.Helper()
	var final string
	for i, c := range clients {
		out := c.wait(t, 2*time.Minute)
		m := finishedLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("client %s did not report the finish:\n%s", names[i], out)
		}
		if m[1] != "rounds" || m[2] != strconv.Itoa(rounds) || m[3] != m[4] {
			t.Errorf("client %s: finished (%s) after %s rounds, ε %s, recomputed %s", names[i], m[1], m[2], m[3], m[4])
		}
		if final == "" {
			final = m[5]
		} else if m[5] != final {
			t.Errorf("client %s ends with model %s, client %s with %s", names[i], m[5], names[0], final)
		}
	}
	return final
}
