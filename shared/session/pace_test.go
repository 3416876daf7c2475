package session

import (
	"testing"
	"time"
)

// TestPacer: the pacer calls yield only once yieldEvery has passed, and a
// nil yield is allowed.
func TestPacer(t *testing.T) {
	pacer(nil)() // must not panic
	n := 0
	pause := pacer(func() { n++ })
	pause()
	if n != 0 {
		t.Fatalf("yielded %d times at once", n)
	}
	time.Sleep(yieldEvery + 5*time.Millisecond)
	pause()
	pause()
	if n != 1 {
		t.Fatalf("yielded %d times after one period, want 1", n)
	}
}
