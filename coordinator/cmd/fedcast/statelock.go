package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The state directory's lock: 'fedcast serve' (and the demo) hold an
// exclusive lock on DIR/coordinator.lock while the study runs, and 'study
// topup' takes the same lock, so that a top-up is refused while a
// coordinator runs on the ledger (a running coordinator would not see it
// until restarted, and could record the study's end after it). The
// operating system drops the lock when the process ends, however it ends.

// errStateLocked: another process holds the state directory's lock.
var errStateLocked = errors.New("a coordinator is running on this state directory")

// lockState takes the lock of state directory dir without waiting.
func lockState(dir string) (*os.File, error) {
	path := filepath.Join(dir, "coordinator.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errStateLocked) {
			return nil, fmt.Errorf("%w (%s is locked): stop 'fedcast serve' first", errStateLocked, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
