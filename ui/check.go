package ui

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// The chosen file checked against the study, the round time it would take
// here, and the LHA's own limits: what decides whether Join can be pressed.

// checkStudy checks that the chosen file gives training windows for the
// study (region by region, yielding), counts them, and estimates how long
// one round of local training takes here. It takes the lock itself.
func (s *JoinState) checkStudy() {
	s.lock()
	d, w := s.Data, s.Welcome
	maxWindows := s.maxWindows()
	if d == nil || w == nil {
		s.unlock()
		return
	}
	s.Checking = true
	s.unlock()

	var est time.Duration
	set, err := s.prepareTraining(w.Study, d, maxWindows)
	if err == nil && set.Total() == 0 {
		err = series.ErrTooShort
	}
	if err == nil {
		est, err = estimateRound(w.Study, set, s.renderCost)
	}
	s.publish(func() {
		s.Checking = false
		if s.Data != d {
			return // another file was chosen meanwhile
		}
		s.Unusable = nil
		switch {
		case err != nil && unusable(err):
			// The file parsed: the LHA can still join, present only
			// (being ready never depends on what the file holds).
			s.Unusable = UnusableProblem(err, w.Study, d)
			s.prepared, s.Windows, s.PerRound, s.RoundEstimate = nil, 0, 0, 0
		case err != nil:
			s.DataProblem = DataProblem(err)
			s.Data = nil
		default:
			s.prepared = set
			s.Windows, s.PerRound, s.RoundEstimate = set.Total(), set.PerRound(), est
		}
	})
}

// roundTimer times one round of local training (session.EstimateRound;
// tests replace it).
var roundTimer = session.EstimateRound

// estimateRound is how long one round takes in this page: the median of
// three timings of its training, plus what the page's renders add to it
// (render: what the last render took). A single timing of two steps is a
// few milliseconds, and on a slow computer a garbage collection or code
// not yet optimised by the browser can fall into it: on one 6x-throttled
// Chromium the same file was estimated at less than a tenth of a second,
// 0.3 s and 3 s on three loads. During training the page renders at the
// first and the last step and takes at most about a fifth of the time
// for renders in between (Progress): with the 400-area file a render took
// 250 ms there, so rounds estimated at 0.4 s took over a second.
func estimateRound(st protocol.Study, set *session.TrainingSet, render time.Duration) (time.Duration, error) {
	var ts [3]time.Duration
	for i := range ts {
		d, err := roundTimer(st, set)
		if err != nil {
			return 0, err
		}
		ts[i] = d
	}
	slices.Sort(ts[:])
	return ts[1]*5/4 + 2*render, nil
}

// unusable reports whether a failed check is about what the file holds
// (session.Unusable), not about the study's public inputs, which the page
// could not fetch or read: those stop the LHA whatever its file.
func unusable(err error) bool {
	if errors.Is(err, forecast.ErrAreaNotPublic) {
		return true
	}
	return publicProblem(err) == nil && session.Unusable(err)
}

// UnusableProblem says why a file that was read (d) cannot be used for
// the study, and what the LHA can do: export the days it lacks, or tell
// the coordinator what only the coordinator can change.
func UnusableProblem(err error, st protocol.Study, d *series.Dataset) *Problem {
	p := DataProblem(err)
	var ce *series.CoverageError
	switch {
	case errors.As(err, &ce), errors.Is(err, forecast.ErrAreaNotPublic):
		// The error's own words name the days or the area.
	case session.IsWeekly(st):
		p.Fix = "Export more weeks of every area, then choose the file again. " +
			"If your authority has no more, tell your coordinator: your file is too short for this study's model."
	case st.From != "" || st.To != "":
		p.Fix = studyDaysFix(st)
	default:
		need := minDays(st)
		if short := shortAreas(d, need); short != "" {
			p.Title = "Your file is too short for this study"
			p.Detail = fmt.Sprintf("%s. This study needs at least %d days in a row for every area.", short, need)
		}
		p.Fix = "Export more days for every area, then choose the file again. " +
			"If your authority has no more days, tell your coordinator: your file is too short for this study's model."
	}
	if p.Title == "The file could not be read" {
		p.Title = "This study cannot use your file"
	}
	return p
}

// minDays is the fewest days in a row an area needs for one training
// window of a study without from/to dates: each window reads H days and
// its target is P days on, the 7-day average takes 6 more days around
// them, and the earliest train_fraction of the windows (rounded down)
// are the training ones.
func minDays(st protocol.Study) int {
	k := 1
	for f := st.TrainFraction; f > 0 && int(f*float64(k)) < 1 && k < 1000; k++ {
	}
	return st.History + st.Horizon + 6 + k
}

// shortAreas names the areas of d with fewer than need days and their
// days ("Area A has 5 days", up to three, then how many more); "" when
// none is.
func shortAreas(d *series.Dataset, need int) string {
	var named []string
	more := 0
	for _, r := range d.Regions {
		switch n := len(r.Cases); {
		case n >= need:
		case len(named) < 3:
			named = append(named, fmt.Sprintf("area %s has %s", r.Name, Plural(n, "day")))
		default:
			more++
		}
	}
	if len(named) == 0 {
		return ""
	}
	w := strings.Join(named, ", ")
	if more > 0 {
		w += fmt.Sprintf(", and %s more", Plural(more, "area"))
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// maxWindows is the cap on windows per round in force.
func (s *JoinState) maxWindows() int {
	if s.MaxWindows > 0 {
		return s.MaxWindows
	}
	return session.DefaultMaxWindows
}

// RoundTime is how long the coordinator takes updates in each round: the
// round length less the slack it keeps to add the noise and release the
// model (0 when the study does not say).
func (s *JoinState) RoundTime() time.Duration {
	if s.Welcome == nil {
		return 0
	}
	st := s.Welcome.Study
	return time.Duration(st.RoundLength - st.RoundSlack)
}

// WouldMiss reports whether the estimated round time leaves less than a
// fifth of the coordinator's round time to spare: the update would likely
// arrive too late to count.
func (s *JoinState) WouldMiss() bool {
	rt := s.RoundTime()
	return rt > 0 && s.RoundEstimate > rt*4/5
}

// SetMaxWindows sets the cap on windows per round from the page's field
// and checks the file again (call from a goroutine: it yields).
func (s *JoinState) SetMaxWindows(text string) {
	n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(text, ",", "")))
	s.lock()
	if err != nil || n < 1 {
		s.LimitProblem = fmt.Sprintf("%q is not a number of examples: type a whole number such as 2000.", text)
		s.unlock()
		return
	}
	s.LimitProblem = ""
	s.MaxWindows = n
	s.unlock()
	s.checkStudy()
}

// SetMaxEpsilon sets the LHA's own privacy limit from the page's field.
// Call with the lock held (an event handler).
func (s *JoinState) SetMaxEpsilon(text string) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(text, ",", ".")), 64)
	budget := 0.0
	if s.Welcome != nil {
		budget = s.Welcome.Study.Epsilon
	}
	switch {
	case err != nil || !(v > 0) || math.IsInf(v, 0):
		s.LimitProblem = fmt.Sprintf("%q is not a privacy limit: type a number above 0, such as 1 or 0.5.", text)
	case budget > 0 && v > budget:
		s.LimitProblem = fmt.Sprintf("Your limit cannot be above the study's budget (ε = %s): the study stops there anyway. The limit stays at ε = %s.",
			FormatEpsilon(budget), FormatEpsilon(budget))
		s.MaxEpsilon = budget
	default:
		s.LimitProblem = ""
		s.MaxEpsilon = v
	}
}

// EpsilonLimit is the LHA's own ε limit in force: its choice, or the
// study's budget.
func (s *JoinState) EpsilonLimit() float64 {
	if s.MaxEpsilon > 0 {
		return s.MaxEpsilon
	}
	if s.Welcome != nil {
		return s.Welcome.Study.Epsilon
	}
	return 0
}

// CanJoin reports whether the join button is active: a file was chosen
// and parsed, and checked against the study. Whether the study can use
// it does not matter (an LHA whose file it cannot use joins present
// only, see Unusable): being ready says nothing about the file's content.
func (s *JoinState) CanJoin() bool {
	return s.Phase == PhaseReady && s.Data != nil && (s.prepared != nil || s.Unusable != nil) && !s.Checking && s.session != nil &&
		(s.Welcome.State != protocol.StateFinished || s.Round > 0) && (!s.Welcome.Study.InsecureSeed || s.InsecureAck)
}

// Ended reports whether the page opened on a study that has ended: its
// coordinator said so (a study stopped before its last round by its
// budget or its operator), or every round was already released. The
// button then only makes the final model's forecast, and this
// computer's training settings do not apply.
func (s *JoinState) Ended() bool {
	return s.Welcome != nil && (s.Welcome.State == protocol.StateFinished || s.allReleased())
}

// allReleased reports whether every round of the study (its current
// campaign's parameters) was already released when the page opened.
func (s *JoinState) allReleased() bool {
	st := s.Welcome.Study
	if sc, ok := s.session.(interface{ Study() protocol.Study }); ok && sc.Study().Params > 0 {
		st = sc.Study()
	}
	return s.Round > 0 && s.Round >= st.Rounds
}
