package study

import (
	"fmt"
	"testing"
	"time"
)

// TestAuthFailures: counts per address within a window, a fresh start in
// the next, and at most MaxTrackedAddrs addresses (plus one shared count)
// however many sources fail.
func TestAuthFailures(t *testing.T) {
	f := NewAuthFailures(0, 0)
	if f.Max() != DefaultMaxFailedAuth || f.Window() != FailedAuthWindow {
		t.Fatalf("defaults %d, %v", f.Max(), f.Window())
	}
	now := time.Now()
	for i := 1; i <= 3; i++ {
		if n := f.Fail("10.0.0.1", now); n != i {
			t.Fatalf("failure %d counted %d", i, n)
		}
	}
	if n := f.Fail("10.0.0.2", now); n != 1 {
		t.Errorf("another address starts at %d", n)
	}
	for i := range MaxTrackedAddrs + 10 {
		f.Fail(fmt.Sprintf("10.%d.%d.%d", 1+i>>16&255, i>>8&255, i&255), now)
	}
	if n := f.Tracked(); n != MaxTrackedAddrs+1 {
		t.Errorf("%d addresses tracked, want %d and the shared overflow", n, MaxTrackedAddrs)
	}
	if n := f.Fail("10.0.0.1", now.Add(FailedAuthWindow)); n != 1 || f.Tracked() != 1 {
		t.Errorf("next window: count %d, %d tracked; want a fresh start", n, f.Tracked())
	}
}
