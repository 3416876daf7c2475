package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fedcast/fedcast/shared/forecast"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/series"
	"github.com/fedcast/fedcast/shared/session"
)

// A study of the weekly design (session.IsWeekly) reads the public inputs
// file the study declares: the page downloads it from the coordinator
// (/api/public/SHA256), checks its size and SHA-256 against the
// declaration, reads it, and trains and forecasts with it.

// errNoFetch is the problem when the page cannot download files.
var errNoFetch = errors.New("this page cannot download the study's public inputs file")

// loadPublic downloads, checks and reads the study's public totals file.
func (s *JoinState) loadPublic(st protocol.Study) (*forecast.PublicInputs, error) {
	var decl *protocol.PublicInput
	for i, p := range st.PublicInputs {
		if p.Name == protocol.PublicTotals && p.SHA256 != "" {
			decl = &st.PublicInputs[i]
		}
	}
	if decl == nil {
		return nil, session.ErrNoPublic
	}
	if s.Fetch == nil {
		return nil, errNoFetch
	}
	u, err := url.Parse(s.Link)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code, b, err := s.Fetch(ctx, (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/api/public/" + decl.SHA256}).String(), "")
	if err != nil {
		return nil, fmt.Errorf("downloading the public inputs file: %w", err)
	}
	if code != 200 {
		return nil, fmt.Errorf("downloading the public inputs file: the coordinator answered %d", code)
	}
	if err := decl.Check(b); err != nil {
		return nil, err
	}
	return forecast.ReadPublicFile(bytes.NewReader(b), "the study's public inputs file")
}

// prepareTraining returns the training windows of d for study st: in a
// weekly study those of the weekly design with the public inputs (which
// it downloads and keeps for training and forecasting), otherwise
// session.PrepareTraining's.
func (s *JoinState) prepareTraining(st protocol.Study, d *series.Dataset, maxWindows int) (*session.TrainingSet, error) {
	if !session.IsWeekly(st) {
		return session.PrepareTraining(st, d, maxWindows, s.Yield)
	}
	pub, err := s.loadPublic(st)
	if err != nil {
		return nil, err
	}
	s.lock()
	s.public = pub
	s.unlock()
	return session.PrepareWeekly(st, d, pub, maxWindows)
}

// evaluate is session.EvaluateProgress, reporting to progress, or
// session.EvaluateWeekly with the downloaded public inputs in a weekly
// study (one forecast per area, quick: it reports nothing).
func (s *JoinState) evaluate(st protocol.Study, d *series.Dataset, params []float64, issued []session.Issued, progress func(session.Progress)) (session.Evaluation, error) {
	if !session.IsWeekly(st) {
		return session.EvaluateProgress(st, d, params, issued, s.Yield, progress)
	}
	s.lock()
	pub := s.public
	s.unlock()
	return session.EvaluateWeekly(st, d, pub, params, issued)
}

// setPublic hands the downloaded public inputs to a session that takes
// them (*session.Session).
func (s *JoinState) setPublic(sess any) {
	if p, ok := sess.(interface {
		SetPublic(*forecast.PublicInputs)
	}); ok && s.public != nil {
		p.SetPublic(s.public)
	}
}

// publicProblem says in plain words what is wrong with a weekly study's
// public inputs (nil for any other error).
func publicProblem(err error) *Problem {
	switch {
	case errors.Is(err, forecast.ErrAreaNotPublic):
		return &Problem{Title: "An area of your file is not in the study's public inputs", Detail: TechLine(err),
			Fix: "Check the area ids of your file (leading zeros count) against the list the coordinator published, or ask the coordinator for a public file that lists your areas."}
	case errors.Is(err, session.ErrNoPublic), errors.Is(err, errNoFetch), errors.Is(err, protocol.ErrPublicInput),
		errors.Is(err, forecast.ErrPublicFile), strings.HasPrefix(err.Error(), "downloading the public inputs file"):
		return &Problem{Title: "The study's public inputs could not be used", Detail: TechLine(err),
			Fix: "This study's model reads the public national and state case totals the coordinator serves. Reload the page; if it happens again, tell the coordinator."}
	}
	return nil
}
