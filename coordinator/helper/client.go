package helper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// ErrUnavailable wraps every failure to get a share from the helper: it
// is down, unreachable, or refused. The leader then abandons the round:
// nothing is released and no budget is spent.
var ErrUnavailable = errors.New("helper: no aggregate share from the helper")

// A Client is the leader's side of the helper API.
type Client struct {
	// URL is the helper's base URL (protocol.Helper.URL). Required.
	URL string
	// HTTP defaults to http.DefaultClient.
	HTTP *http.Client
}

// Aggregate forwards one round's reports (IDs and sealed seeds) with the
// study value and returns the helper's aggregate share. Errors wrap
// ErrUnavailable and carry the helper's words.
func (c *Client) Aggregate(ctx context.Context, st *protocol.Study, round int, reports []*secagg.Report) (*protocol.HelperResponse, error) {
	req := protocol.HelperRequest{Study: *st, Round: round, Reports: make([]secagg.Sealed, 0, len(reports))}
	for _, r := range reports {
		req.Reports = append(req.Reports, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	body, err := json.Marshal(&req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+PathAggregate, bytes.NewReader(body))
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
	if resp.StatusCode != http.StatusOK {
		var he protocol.HelperError
		if json.Unmarshal(b, &he) != nil || he.Error == "" {
			he.Error = resp.Status
		}
		return nil, fmt.Errorf("%w: the helper refused round %d: %s", ErrUnavailable, round, he.Error)
	}
	var out protocol.HelperResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%w: the helper's answer is not JSON: %v", ErrUnavailable, err)
	}
	if out.Round != round || len(out.Share) != 8*st.Params {
		return nil, fmt.Errorf("%w: the helper answered round %d with %d bytes, want round %d with %d", ErrUnavailable, out.Round, len(out.Share), round, 8*st.Params)
	}
	return &out, nil
}
