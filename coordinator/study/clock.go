package study

import "time"

// defaultClock is the clock of Options.Now when none is given: only
// recorded times (never a decision) come from it; drivers inject theirs.
var defaultClock = time.Now
