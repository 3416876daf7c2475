package series

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Split selects how each area's windows are divided into training and
// test windows.
type Split int

const (
	// Temporal trains on each area's earliest windows by target date and
	// tests on the latest, so every test target is later than every
	// training target of the same area (spec §3; the honest split for
	// forecasting).
	Temporal Split = iota
	// Random shuffles each area's windows before splitting, as the
	// paper's published code does.
	Random
)

// DefaultTrainFraction is the share of each area's windows used for
// training.
const DefaultTrainFraction = 0.9

// String returns "temporal" or "random".
func (s Split) String() string {
	switch s {
	case Temporal:
		return "temporal"
	case Random:
		return "random"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// ParseSplit parses "temporal" or "random" (case-insensitive).
func ParseSplit(s string) (Split, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "temporal":
		return Temporal, nil
	case "random":
		return Random, nil
	}
	return 0, fmt.Errorf("%w: split %q (want temporal or random)", ErrOption, s)
}

// SplitAreas divides each area's windows: the first int(f·n) of an area's
// n windows train, the rest test, where f is trainFraction (0 means
// DefaultTrainFraction). With Temporal "first" is by target date (the
// order MakeWindows returns); with Random each area's windows are first
// shuffled with rng, areas in order. With f = 0.9 that is 12/2 windows
// for n = 14 and 13/2 for n = 15.
//
// train and test have one entry per input area, in the same order, even
// when an area contributes no window to one side. Within each side the
// windows are sorted by target date. Windows are copied by value; their X
// slices are shared with the input.
//
// SplitAreas panics if trainFraction is outside [0, 1] or NaN, if s is
// unknown, or if s is Random and rng is nil: these are configuration
// checks the caller makes first (ParseSplit).
func SplitAreas(areas []Area, s Split, trainFraction float64, rng *rand.Rand) (train, test []Area) {
	f := trainFraction
	if f == 0 {
		f = DefaultTrainFraction
	}
	if !(f > 0 && f <= 1) {
		panic(fmt.Sprintf("series: train fraction %v outside (0, 1]", trainFraction))
	}
	if s != Temporal && s != Random {
		panic(fmt.Sprintf("series: unknown split %d", int(s)))
	}
	if s == Random && rng == nil {
		panic("series: random split needs a random number generator")
	}
	train = make([]Area, len(areas))
	test = make([]Area, len(areas))
	for i, a := range areas {
		ws := append([]Window(nil), a.Windows...)
		if s == Random {
			rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
		}
		nTrain := int(f * float64(len(ws)))
		tr, te := ws[:nTrain:nTrain], ws[nTrain:]
		if s == Random {
			byTarget(tr)
			byTarget(te)
		}
		train[i] = Area{Region: a.Region, Windows: tr}
		test[i] = Area{Region: a.Region, Windows: te}
	}
	return train, test
}

func byTarget(ws []Window) {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Target.Before(ws[j].Target) })
}
