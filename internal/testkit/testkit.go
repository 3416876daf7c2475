// Package testkit holds test helpers shared by fedcast's packages: where the
// module root and the team kit's real data are, and the CI rule that a test
// needing them may skip on a developer machine but must fail in CI.
package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// CIEnv is the environment variable set by .ci/run. When it is "1", tests
// that would otherwise skip for a missing resource (real data, a browser)
// fail instead: in CI nothing may skip silently.
const CIEnv = "FEDCAST_CI"

// InCI reports whether the tests run under .ci/run.
func InCI() bool { return os.Getenv(CIEnv) == "1" }

// Missing skips t with reason, or fails it when running in CI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (%s=1: a missing resource is a failure in CI)", reason, CIEnv)
	}
	t.Skip(reason)
}

// RepoRoot returns the directory holding go.mod, searching upwards from the
// working directory. It returns "" when there is none.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// DataDir returns the team kit's data folder (../shared/data beside the
// repository, or $FEDCAST_DATA when set). When it is absent the test skips
// with a clear message, or fails under CI.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("FEDCAST_DATA")
	if dir == "" {
		root := RepoRoot()
		if root == "" {
			Missing(t, "testkit: cannot find the module root to locate ../shared/data")
			return ""
		}
		dir = filepath.Join(root, "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "county_cases_daily.csv")); err != nil {
		Missing(t, "testkit: real data not found at "+dir+" (expected county_cases_daily.csv; the team kit ../shared must be beside the repository)")
		return ""
	}
	return dir
}

// SyncBuffer is a bytes.Buffer that goroutines may write while a test
// reads it (a server's or a command's log).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
