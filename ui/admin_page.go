package ui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/vugu/vugu"
)

// AdminPage is the coordinator dashboard (admin-page.vugu).
type AdminPage struct {
	S *AdminState // Required.
}

func (c *AdminPage) title() string {
	if n := c.S.Status.Name; n != "" {
		return n
	}
	return "Study"
}

func (c *AdminPage) roundWords() string {
	st := c.S.Status
	w := fmt.Sprintf("%d of %d", st.Round, st.Rounds)
	if st.Campaigns > 1 {
		done := st.Round * st.Campaigns / max(st.Rounds, 1) // whole campaigns released
		w += fmt.Sprintf(" (%d of %d campaigns done)", done, st.Campaigns)
	}
	return w
}

func (c *AdminPage) roundFraction() float64 {
	if t := c.S.Status.Rounds; t > 0 {
		return float64(c.S.Status.Round) / float64(t)
	}
	return 0
}

func (c *AdminPage) width(f float64) string {
	return "width: " + strconv.FormatFloat(math.Max(0, math.Min(1, f))*100, 'f', 1, 64) + "%"
}

func (c *AdminPage) noiseWords() string {
	if c.exampleOnly() {
		return "none"
	}
	return strconv.FormatFloat(c.S.Status.NoiseMultiplier, 'g', 4, 64)
}

// exampleOnly reports a study with privacy "example": no client-level
// noise or budget at the coordinator.
func (c *AdminPage) exampleOnly() bool { return c.S.Status.Guarantee == "example" }

func (c *AdminPage) epsilonWords() string {
	st := c.S.Status
	if c.exampleOnly() {
		return "per window: ε = " + FormatEpsilon(st.ExampleEpsilon)
	}
	if st.SecureAggregation {
		return SecureEpsilonShort(st.EpsilonSpent, st.EpsilonPublic) + "; budget " + FormatEpsilon(st.EpsilonBudget)
	}
	return FormatEpsilon(st.EpsilonSpent) + " of " + FormatEpsilon(st.EpsilonBudget)
}

func (c *AdminPage) epsilonLabel() string {
	st := c.S.Status
	if c.exampleOnly() {
		return fmt.Sprintf("no client-level budget (privacy \"example\"): each LHA's own budget per training window, δ = %s; "+
			"this coordinator adds no noise and sees every update as sent", FormatDelta(st.ExampleDelta))
	}
	w := fmt.Sprintf("privacy budget ε spent (δ = %s)", FormatDelta(st.Delta))
	if st.Campaigns > 1 {
		w = fmt.Sprintf("lifetime privacy budget ε spent, all %d campaigns together (δ = %s)", st.Campaigns, FormatDelta(st.Delta))
	}
	if l := c.S.Ledger; l != nil && len(l.TopUps) > 0 {
		first, last := l.TopUps[0], l.TopUps[len(l.TopUps)-1]
		by := fmt.Sprintf("top-up %d on %s", last.Number, last.At.Local().Format("2 January 15:04"))
		if len(l.TopUps) > 1 {
			by = fmt.Sprintf("%d top-ups, the last on %s", len(l.TopUps), last.At.Local().Format("2 January 15:04"))
		}
		w += fmt.Sprintf("; raised from ε = %s to %s by %s", FormatEpsilon(first.FromEpsilon), FormatEpsilon(last.Epsilon), by)
	}
	return w
}

// noiseLabel explains the noise tile. After a top-up the rounds have
// different c (the status gives the smallest, protocol.Study.Apply): the
// label lists each block of rounds with its c. It said "noise multiplier
// c" alone, with the added rounds' c.
func (c *AdminPage) noiseLabel() string {
	const what = "noise multiplier c: the noise added to each round's average, as a multiple of the most one LHA can change it (σ = c·S/m)"
	l := c.S.Ledger
	if c.exampleOnly() || l == nil || len(l.TopUps) == 0 || l.Study.Rounds == 0 {
		return what
	}
	blocks := []string{fmt.Sprintf("%s: c = %s", roundSpan(1, l.Study.Rounds), strconv.FormatFloat(l.NoiseMultiplier, 'g', 4, 64))}
	to := l.Study.Rounds
	for _, t := range l.TopUps {
		blocks = append(blocks, fmt.Sprintf("%s (top-up %d): c = %s", roundSpan(to+1, to+t.Rounds), t.Number, strconv.FormatFloat(t.NoiseMultiplier, 'g', 4, 64)))
		to += t.Rounds
	}
	return fmt.Sprintf("%s; the smallest of the study's rounds, which after a top-up differ: %s", what, strings.Join(blocks, "; "))
}

// roundSpan says "rounds a–b", or "round a".
func roundSpan(a, b int) string {
	if a == b {
		return "round " + strconv.Itoa(a)
	}
	return fmt.Sprintf("rounds %d–%d", a, b)
}

func (c *AdminPage) onDemoStart(event vugu.DOMEvent) {
	go c.S.StartDemo(context.Background())
}

// helperKeyWords says the Worker's check of the helper's key ("" when
// there is none), as a sentence with when it was made.
func (c *AdminPage) helperKeyWords() string {
	k := c.S.Upcoming.HelperKey
	if k == nil || k.Words == "" {
		return ""
	}
	w := strings.ToUpper(k.Words[:1]) + k.Words[1:]
	if !strings.HasSuffix(w, ".") {
		w += "."
	}
	if k.CheckedAt != nil {
		w += " (Checked at " + c.at(*k.CheckedAt) + ".)"
	}
	return w
}

// helperKeyClass marks a helper with another key, or none answering, as a
// problem to fix.
func (c *AdminPage) helperKeyClass() string {
	if k := c.S.Upcoming.HelperKey; k != nil && (k.State == "differs" || k.State == "no answer") {
		return "problem"
	}
	return "muted"
}

func (c *AdminPage) stateWords() string {
	st := c.S.Status
	up := c.S.Upcoming
	s := ""
	switch st.State {
	case protocol.StateWaiting:
		need := "enough LHAs"
		if up.StartQuorum > 0 {
			need = fmt.Sprintf("%s of the %s enrolled LHAs (the study's start quorum)", FormatCount(float64(up.StartQuorum)), FormatCount(float64(st.Enrolled)))
		}
		s = fmt.Sprintf("Waiting for %s to be ready before round 1: %s ready, %s online. An LHA is ready once it has chosen and checked its file and pressed Join; a page that is only open does not count.",
			need, FormatCount(float64(st.Ready)), FormatCount(float64(st.Online)))
	case protocol.StateRunning:
		s = "Running."
		switch o := st.OpenRound; {
		case o != nil:
			s = fmt.Sprintf("Round %d open: %d updates received so far; %s online, %s ready.", o.Round, o.Received,
				FormatCount(float64(st.Online)), FormatCount(float64(st.Ready)))
		case up.ResumeBy != nil:
			s = fmt.Sprintf("The coordinator has restarted and waits until %s LHAs are ready again (%s ready, %s online now), at the latest until %s; "+
				"the rounds then go on at the next slot of the timetable.",
				FormatCount(float64(up.StartQuorum)), FormatCount(float64(st.Ready)), FormatCount(float64(st.Online)), c.at(*up.ResumeBy))
		case up.NextRound > 0 && up.NextRoundOpens != nil:
			s = "Running. " + c.nextRoundWords(up.NextRound, *up.NextRoundOpens)
		}
		if up.PendingRound > 0 {
			when := "when the rounds go on"
			if up.PendingRelease != nil {
				when = "at " + c.at(*up.PendingRelease)
			}
			s += fmt.Sprintf(" Round %d is recorded in the ledger (its ε counts in the table below) and is sent to the LHAs %s.", up.PendingRound, when)
		}
	case protocol.StateFinished:
		s = "Finished"
		switch st.FinishReason {
		case "rounds":
			s += ": all planned rounds done."
		case "budget":
			s += ": one more round would have exceeded the privacy budget."
		default:
			s += "."
		}
		if st.Campaigns > 1 && (st.FinishReason == "rounds" || st.FinishReason == "budget") {
			s += ` To train more campaigns, a top-up can raise the lifetime budget ("fedcast study topup" with the coordinator stopped; docs/deployment.md, "Raising the budget").`
		}
	default:
		s = st.State
	}
	clip := ""
	if c.S.Ledger != nil && c.S.Ledger.Study.ClipNorm > 0 {
		clip = "; clip bound S = " + strconv.FormatFloat(c.S.Ledger.Study.ClipNorm, 'g', 4, 64)
	}
	return fmt.Sprintf("%s Each round samples every enrolled LHA with probability q = %s (m = %d of N = %d)%s. Updated %s.",
		s, FormatPercent(st.SampleRate), st.ExpectedClients, st.Clients, clip, c.S.Updated.Format("15:04:05"))
}

// nextRoundWords says when round opens: in a continuing study, with its
// campaign, and that the campaign before it is done when it is the first
// of its campaign.
func (c *AdminPage) nextRoundWords(round int, opens time.Time) string {
	st := c.S.Status
	if st.Campaigns <= 1 {
		return fmt.Sprintf("Round %d opens at %s.", round, c.at(opens))
	}
	plan := protocol.Study{Settings: protocol.Settings{Rounds: st.Rounds, Campaigns: st.Campaigns}}
	k, i := plan.CampaignOf(round)
	if i == 1 && k > 1 {
		return fmt.Sprintf("Campaign %d of %d is done. Campaign %d starts at %s with round %d.", k-1, plan.CampaignCount(), k, c.at(opens), round)
	}
	return fmt.Sprintf("Round %d (round %d of %d in campaign %d of %d) opens at %s.", round, i, plan.CampaignRounds(), k, plan.CampaignCount(), c.at(opens))
}

// at says a time on the dashboard: the clock time, with the day when it
// is not the day of the last update.
func (c *AdminPage) at(t time.Time) string {
	t = t.Local()
	u := c.S.Updated.Local()
	if t.YearDay() == u.YearDay() && t.Year() == u.Year() {
		return t.Format("15:04:05")
	}
	return t.Format("Monday 2 January 15:04")
}

// WordRereleased marks a round in the dashboard's table that the
// coordinator had finished before a restart and sent out after it.
const WordRereleased = "(released after a restart)"

// WordPending marks a round in the dashboard's table that is recorded in
// the ledger and not yet sent to the LHAs (the status line says when it
// is).
const WordPending = "(recorded, not yet sent)"

// roundLabel is the round's number, marked when the round was released
// after a restart of the coordinator (it had been finished, not yet sent),
// or is recorded and not yet sent.
func (c *AdminPage) roundLabel(r AdminRoundRow) string {
	if c.S != nil && c.S.Status != nil && r.Round == c.S.Upcoming.PendingRound && r.Round > c.S.Status.Round {
		return strconv.Itoa(r.Round) + " " + WordPending
	}
	if r.Rereleased {
		return strconv.Itoa(r.Round) + " " + WordRereleased
	}
	return strconv.Itoa(r.Round)
}

// WordNoUpdate marks a round in the dashboard's table in which no update
// was counted: every sampled LHA was offline, sent nothing in time, or sat
// out (its own ε limit, a file without usable windows), so the round's
// model change is noise only.
const WordNoUpdate = "0 (none: this round's model change is noise only)"

// receivedWords is the round's count of updates received, marked when it
// is none of the sampled LHAs'.
func (c *AdminPage) receivedWords(r AdminRoundRow) string {
	if r.HasParticipation && r.Sampled > 0 && r.Received == 0 {
		return WordNoUpdate
	}
	return strconv.Itoa(r.Received)
}

func (c *AdminPage) duration(r AdminRoundRow) string {
	if !r.HasParticipation {
		return "–"
	}
	if r.Duration < time.Second {
		return strconv.FormatInt(r.Duration.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(r.Duration.Seconds(), 'f', 1, 64) + " s"
}

func (c *AdminPage) lhaClass(l AdminLHA) string {
	if l.Online {
		return "online"
	}
	return "offline"
}

func (c *AdminPage) onLedger(event vugu.DOMEvent) {
	c.S.ExportLedger()
}

// lhaCounts is the dashboard's tile of LHAs: how many are ready and how
// many online (counts only: never who was picked).
func (c *AdminPage) lhaCounts() string {
	st := c.S.Status
	return FormatCount(float64(st.Ready)) + " ready · " + FormatCount(float64(st.Online)) + " online"
}

func (c *AdminPage) lhaCountsLabel() string {
	return fmt.Sprintf("of %s enrolled; ready: file checked and Join pressed (only they count for the start)", FormatCount(float64(c.S.Status.Enrolled)))
}
