package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/model"
	"github.com/fedcast/fedcast/shared/privacy"
	"github.com/fedcast/fedcast/shared/publish"
	"github.com/fedcast/fedcast/shared/session"
)

// PublishStore keeps this browser's published forecasts across reloads
// (the page's localStorage, set by package wasm), so that publishing the
// same day again shows the same numbers. Nil: kept for the page's life.
var PublishStore session.AccountStore

// PublishState is the page's "Publish" option (issue 27): the forecast
// with privacy noise, for a website, a briefing or a forecast hub.
type PublishState struct {
	// Epsilon is ε per person per year of the next publication, YearLimit
	// the yearly limit this LHA sets (both 1 until changed).
	Epsilon, YearLimit float64
	Problem            string
	// After publishing: one line per area, the DP marking, ε per person
	// per year over all publications kept, the person's total.
	Lines       []string
	Marking     string
	YearEpsilon float64
	Total       float64
	Hub, HubURL string // the published forecasts (hub CSV) and its download
	MarkURL     string // the DP marking (JSON) download
	mem         []byte // the store when PublishStore is nil
}

func (p *PublishState) epsilon() float64 {
	if p.Epsilon > 0 {
		return p.Epsilon
	}
	return 1
}

func (p *PublishState) limit() float64 {
	if p.YearLimit > 0 {
		return p.YearLimit
	}
	return 1
}

// SetPublishEpsilon reads the ε per person per year of the next
// publication from the page.
func (s *JoinState) SetPublishEpsilon(text string) {
	s.setPublishNumber(text, "privacy level", "1 or 0.5", &s.Publishing.Epsilon)
}

// SetPublishLimit reads the LHA's yearly limit for publications.
func (s *JoinState) SetPublishLimit(text string) {
	s.setPublishNumber(text, "yearly limit", "1", &s.Publishing.YearLimit)
}

// setPublishNumber stores a number above 0 typed into the page in dst, or
// says what to type.
func (s *JoinState) setPublishNumber(text, what, example string, dst *float64) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(text, ",", ".")), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		s.Publishing.Problem = fmt.Sprintf("%q is not a %s: type a number above 0, such as %s.", text, what, example)
		return
	}
	s.Publishing.Problem, *dst = "", v
}

// publishKey names this LHA's published forecasts of this study.
func (s *JoinState) publishKey() string {
	if s.Welcome == nil {
		return "fedcast-published"
	}
	return "fedcast-published:" + s.Welcome.Study.Name + ":" + s.Welcome.LHA
}

// Publish makes the forecast to publish for every area (stored draws for
// days published before) unless it would take ε per person per year
// above the yearly limit; the unpublished forecast above stays as it is.
func (s *JoinState) Publish() {
	p := &s.Publishing
	if s.Data == nil || s.Welcome == nil {
		p.Problem = "Choose your case file and take part in the study first."
		return
	}
	var saved []byte
	if PublishStore != nil {
		saved, _ = PublishStore.LoadAccount(s.publishKey())
	} else {
		saved = p.mem
	}
	store, err := publish.ReadStore(bytes.NewReader(saved))
	if err != nil {
		p.Problem = "The forecasts published before in this browser could not be read: " + err.Error()
		return
	}
	f, sha, err := publish.ForStudy(s.Welcome.Study, s.releasedModel())
	if err != nil {
		p.Problem = "No forecast to publish: " + err.Error()
		return
	}
	ps, mark, err := store.PublishAll(s.Data, f, p.epsilon(), publish.DefaultDelta, privacy.NewSecureRand())
	if err != nil {
		p.Problem = "No forecast to publish: " + err.Error()
		return
	}
	mark = mark.ForModel(sha)
	if mark.EpsilonPerPersonYear > p.limit()*(1+1e-9) {
		p.Problem = fmt.Sprintf("Publishing now would take one person's ε to %s this year, above your yearly limit of %s. Nothing was published: raise the limit or publish with a smaller ε.",
			FormatEpsilon(mark.EpsilonPerPersonYear), FormatEpsilon(p.limit()))
		return
	}
	var buf bytes.Buffer
	if err := store.Write(&buf); err != nil {
		p.Problem = err.Error()
		return
	}
	if PublishStore != nil {
		if err := PublishStore.SaveAccount(s.publishKey(), buf.Bytes()); err != nil {
			p.Problem = "This browser would not keep the published numbers (" + err.Error() + "), so nothing was published: publishing again would draw new noise."
			return
		}
	} else {
		p.mem = buf.Bytes()
	}
	s.showPublished(ps, mark)
}

// releasedModel is the study's latest released model (nil before the
// first round or without a connection): the shared model, not an MR-MTL
// personal one.
func (s *JoinState) releasedModel() []float64 {
	switch sess := s.session.(type) {
	case nil:
		return nil
	case interface{ GlobalModel() []float64 }:
		return sess.GlobalModel()
	default:
		return sess.Model()
	}
}

// showPublished fills the page's words and downloads.
func (s *JoinState) showPublished(ps []publish.Published, mark publish.Marking) {
	p := &s.Publishing
	p.Problem, p.Lines = "", nil
	for _, f := range ps {
		lo, hi, _ := f.Quantiles.Interval(0.95)
		line := fmt.Sprintf("%s: about %s new cases per day over %s … %s (95 %% range %s to %s)", f.Location, FormatCount(f.Quantiles.Median()),
			f.ReferenceDate.AddDate(0, 0, 1).Format(time.DateOnly), f.TargetEndDate.Format(time.DateOnly), FormatCount(lo), FormatCount(hi))
		if f.Again {
			line += ", published before: the same numbers"
		}
		p.Lines = append(p.Lines, line+".")
	}
	p.Marking, p.YearEpsilon = mark.Text(), mark.EpsilonPerPersonYear
	p.Total = s.Welcome.Study.Epsilon + mark.EpsilonPerPersonYear
	var hub bytes.Buffer
	if err := forecast.WriteHub(&hub, publish.HubForecasts(ps)); err != nil {
		p.Problem = err.Error()
		return
	}
	p.Hub = hub.String()
	p.HubURL = objectURL(p.HubURL, p.Hub, "text/csv;charset=utf-8")
	b, _ := json.MarshalIndent(mark, "", "  ")
	p.MarkURL = objectURL(p.MarkURL, string(b), "application/json")
}

// PublishIntro says in plain words what publishing does, which model
// makes the forecast to publish for this study, and what the guarantee
// covers.
func (s *JoinState) PublishIntro() string {
	which := "This study's model cannot be published with this guarantee, so the forecast to publish comes from a public \"no change\" model: last week's level with noise and a range."
	if s.Welcome != nil && s.Welcome.Study.Features == string(model.Lipschitz) {
		which = "It is the study's shared model's forecast with noise and a range."
	}
	return "The forecast above is for you. To put a forecast on a website, in a briefing or in a forecast hub, publish it with privacy noise: " +
		"then no one can tell from it whether any one case is in your data. " + which +
		" What is protected is one reported case: one more or one fewer on one day. A person counted as k cases (for example, reinfections) " +
		"is protected about k times more weakly, and a case moved to another day counts as two changes. The same day published again gives the same numbers."
}

// PublishFigureWords puts ε per person per year against the yearly limit
// and says the person's total.
func (p *PublishState) PublishFigureWords() string {
	return fmt.Sprintf("One person's ε this year from your publications: %s of your yearly limit %s. With the shared model's ε the person's total is %s.",
		FormatEpsilon(p.YearEpsilon), FormatEpsilon(p.limit()), FormatEpsilon(p.Total))
}
