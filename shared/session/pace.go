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

// Progress is how far an evaluation has got through the areas of a file
// (EvaluateProgress). It goes through all of them Passes times, one pass
// after the other, and has finished Done of the Areas areas of pass Pass
// (counted from 1). It only grows: Pass, then Done within a pass. Areas
// too short for the study count as done at the end of each pass.
type Progress struct {
	Pass, Passes int
	Done, Areas  int
}

// tally reports an evaluation's Progress as its passes over the areas go
// on. A nil *tally reports nothing.
type tally struct {
	report func(Progress)
	at     Progress
}

// newTally returns a tally of passes passes reporting to report, or nil
// when report is nil.
func newTally(report func(Progress), passes int) *tally {
	if report == nil {
		return nil
	}
	return &tally{report: report, at: Progress{Passes: passes}}
}

// pass starts the next pass, over areas areas.
func (t *tally) pass(areas int) {
	if t == nil {
		return
	}
	t.at.Pass++
	t.at.Done, t.at.Areas = 0, areas
	t.report(t.at)
}

// area counts one more area of the pass as done.
func (t *tally) area() {
	if t == nil || t.at.Done >= t.at.Areas {
		return
	}
	t.at.Done++
	t.report(t.at)
}

// end counts every area of the pass as done, the skipped ones too.
func (t *tally) end() {
	if t == nil || t.at.Done == t.at.Areas {
		return
	}
	t.at.Done = t.at.Areas
	t.report(t.at)
}
