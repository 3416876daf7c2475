package session

import "time"

// yieldEvery is how long the page's work runs between two calls of its
// yield function (the browser paints and answers input in between).
const yieldEvery = 30 * time.Millisecond

// pacer returns a function to call often inside a long loop: it calls
// yield when yieldEvery has passed since it last did (or since the pacer
// was made). A nil yield gives a function that does nothing.
func pacer(yield func()) func() {
	if yield == nil {
		return func() {}
	}
	last := time.Now()
	return func() {
		if time.Since(last) >= yieldEvery {
			yield()
			last = time.Now()
		}
	}
}
