package ui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/vugu/vugu"
)

// AdminPage is the coordinator dashboard (admin-page.vugu).
type AdminPage struct {
	S *AdminState // Required.
}

func (c *AdminPage) title() string {
	if n := c.S.Status.Study.Name; n != "" {
		return n
	}
	return "Study"
}

func (c *AdminPage) roundWords() string {
	return fmt.Sprintf("%d of %d", c.S.Status.Round, c.S.Status.Study.Rounds)
}

func (c *AdminPage) roundFraction() float64 {
	if t := c.S.Status.Study.Rounds; t > 0 {
		return float64(c.S.Status.Round) / float64(t)
	}
	return 0
}

func (c *AdminPage) width(f float64) string {
	return "width: " + strconv.FormatFloat(math.Max(0, math.Min(1, f))*100, 'f', 1, 64) + "%"
}

func (c *AdminPage) noiseWords() string {
	nm := c.S.Status.NoiseMultiplier
	if nm == 0 {
		nm = c.S.Status.Study.NoiseMultiplier
	}
	return strconv.FormatFloat(nm, 'g', 4, 64)
}

func (c *AdminPage) stateWords() string {
	st := c.S.Status
	s := ""
	switch st.State {
	case protocol.StateWaiting:
		s = "Waiting to start."
	case protocol.StateRunning:
		s = "Running."
	case protocol.StateFinished:
		s = "Finished."
	default:
		s = st.State
	}
	return fmt.Sprintf("%s Each round samples every enrolled LHA with probability q = %s (m = %d of N = %d); clip bound S = %s. Updated %s.",
		s, FormatPercent(st.Study.SampleRate), st.Study.ExpectedClients, st.Study.Clients,
		strconv.FormatFloat(st.Study.ClipNorm, 'g', 4, 64), c.S.Updated.Format("15:04:05"))
}

// recentRounds lists the rounds newest first.
func (c *AdminPage) recentRounds() []AdminRound {
	r := c.S.Status.Rounds
	out := make([]AdminRound, 0, len(r))
	for i := len(r) - 1; i >= 0; i-- {
		out = append(out, r[i])
	}
	return out
}

func (c *AdminPage) duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return strconv.FormatInt(ms, 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

func (c *AdminPage) lhaClass(l AdminLHA) string {
	if l.Online {
		return "online"
	}
	return "offline"
}

func (c *AdminPage) onLedger(event vugu.DOMEvent) {
	go c.S.ExportLedger(context.Background())
}
