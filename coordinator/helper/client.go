package helper

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// ErrUnavailable wraps every failure to get a share from the helper: it
// is down, unreachable, or refused. The leader then abandons the round:
// nothing is released and no budget is spent.
var ErrUnavailable = study.ErrHelperUnavailable

// A Client is the leader's side of the helper API.
type Client struct {
	// URL is the helper's base URL (protocol.Helper.URL). Required.
	URL string
	// Token is the study's leader token (study.HelperRef.LeaderToken):
	// the helper serves no round without it.
	Token string
	// HTTP defaults to http.DefaultClient.
	HTTP *http.Client
}

// Aggregate forwards one round's reports (IDs and sealed seeds) with the
// study value and returns the helper's aggregate share. Errors wrap
// ErrUnavailable and carry the helper's words.
func (c *Client) Aggregate(ctx context.Context, st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, error) {
	body, err := study.HelperRequestBody(st, c.Token, round, reports)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, study.HelperURL(c.URL), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%w: the helper at %s cannot be reached (%v)", ErrUnavailable, c.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the helper's answer: %v", ErrUnavailable, err)
	}
	return study.HelperAnswer(st, round, resp.StatusCode, resp.Status, b)
}

// Key asks the helper for its public key (GET PathKey): the coordinator
// compares it with the study's before the first round, since a helper
// started with another key refuses every round. Its errors say in words
// what failed; the answer is read as the Worker reads it
// (study.HelperKey).
func (c *Client) Key(ctx context.Context) (*secagg.PublicKey, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, study.HelperKeyURL(c.URL), nil)
	if err != nil {
		return nil, fmt.Errorf("the helper address %s: %v", c.URL, err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("the helper at %s cannot be reached (%v)", c.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s for its key: %v", c.URL, err)
	}
	return study.HelperKey(c.URL, resp.StatusCode, resp.Status, b)
}
