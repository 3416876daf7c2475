package study

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fedcast/fedcast/shared/protocol"
	"github.com/fedcast/fedcast/shared/secagg"
)

// The leader's side of the helper API without a transport: serve posts
// with net/http (coordinator/helper.Client), the Durable Object with the
// Worker's fetch (coordinator/worker/object). Both build the same request
// and read the answer with the same checks.

// HelperPathAggregate is the helper's aggregate path (POST, JSON
// protocol.HelperRequest; answers protocol.HelperResponse, or
// protocol.HelperError with 400, 403, 409 or 500).
const HelperPathAggregate = "/helper/v1/aggregate"

// HelperPathKey is the helper's key path (GET; answers JSON
// {"public_key", "fingerprint"}). The leader compares the key with the
// study's before its rounds: the LHAs seal their reports to the study's
// key, so a helper started with another key refuses every round.
const HelperPathKey = "/helper/v1/key"

// HelperKeyURL is the key URL of the helper at base.
func HelperKeyURL(base string) string { return strings.TrimSuffix(base, "/") + HelperPathKey }

// HelperKey reads the helper's HTTP answer to a GET of HelperKeyURL(base)
// (status code, status line and body): its public key. The errors name
// base and say what came instead of a key.
func HelperKey(base string, status int, statusText string, body []byte) (*secagg.PublicKey, error) {
	if status != 200 {
		return nil, fmt.Errorf("the helper at %s answered %s for its key", base, statusText)
	}
	var k struct {
		PublicKey []byte `json:"public_key"`
	}
	if err := json.Unmarshal(body, &k); err != nil {
		return nil, fmt.Errorf("the answer of %s for its key is not a helper's: %v", base, err)
	}
	pk, err := secagg.ParsePublicKey(k.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("the helper at %s answered a key that cannot be read: %v", base, err)
	}
	return pk, nil
}

// HelperKeyDiffers says that the helper at url answered the key with
// fingerprint got while the study names want, and why that matters; the
// same words for serve (which does not start) and the Worker (whose
// rounds are abandoned).
func HelperKeyDiffers(url, got, want string) string {
	return fmt.Sprintf("the helper at %s has the key %s, but the study file names the key %s: the LHAs seal their reports to the study's key, "+
		"so this helper refuses every round", url, got, want)
}

// HelperKeyFix says what to do about a helper with another key than the
// study's fingerprint want.
func HelperKeyFix(want string) string {
	return "start the helper with the key the study names (its operator's 'fedcast helper keygen' file whose fingerprint is " + want +
		"), or make a new study with 'fedcast study new --helper-key' and the helper's current helper.pub"
}

// ErrHelperUnavailable wraps every failure to get a share from the
// helper: it is down, unreachable, or refused. The leader then abandons
// the round: nothing is released and no budget is spent.
var ErrHelperUnavailable = errors.New("helper: no aggregate share from the helper")

// HelperURL is the aggregate URL of the helper at base.
func HelperURL(base string) string { return strings.TrimSuffix(base, "/") + HelperPathAggregate }

// HelperRequestBody is the JSON body that asks the helper for its share
// of round over reports (their IDs and sealed seeds, with the study value
// and the leader token, HelperRef.LeaderToken).
func HelperRequestBody(st *protocol.Study, token string, round int, reports []*secagg.Report) ([]byte, error) {
	req := protocol.HelperRequest{LeaderToken: token, Study: *st, Round: round, Reports: make([]secagg.Sealed, 0, len(reports))}
	for _, r := range reports {
		req.Reports = append(req.Reports, secagg.Sealed{ID: r.ID, SealedSeed: r.SealedSeed})
	}
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHelperUnavailable, err)
	}
	return b, nil
}

// HelperAnswer reads the helper's HTTP answer to round (status code,
// status line and body). Errors wrap ErrHelperUnavailable and carry the
// helper's words.
func HelperAnswer(st *protocol.Study, round, status int, statusText string, body []byte) (*protocol.HelperResponse, error) {
	if status != 200 {
		var he protocol.HelperError
		if json.Unmarshal(body, &he) != nil || he.Error == "" {
			he.Error = statusText
		}
		return nil, fmt.Errorf("%w: the helper refused round %d: %s", ErrHelperUnavailable, round, he.Error)
	}
	var out protocol.HelperResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("%w: the helper's answer is not JSON: %v", ErrHelperUnavailable, err)
	}
	if out.Round != round || len(out.Share) != 8*st.Params {
		return nil, fmt.Errorf("%w: the helper answered round %d with %d bytes, want round %d with %d", ErrHelperUnavailable, out.Round, len(out.Share), round, 8*st.Params)
	}
	return &out, nil
}

// EncodeForwarded is the record of the report set forwarded for round of
// the study with hash: the leader keeps it before it forwards the set, so
// that a reopened round forwards the same set again (the helper releases
// one share per round).
func EncodeForwarded(hash [32]byte, round int, reports []*secagg.Report) []byte {
	var b bytes.Buffer
	b.Write(hash[:])
	b.Write(binary.BigEndian.AppendUint64(nil, uint64(round)))
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(reports))))
	for _, r := range reports {
		b.Write(r.Marshal())
	}
	return b.Bytes()
}

// DecodeForwarded reads an EncodeForwarded record; ok is false unless it
// is round's of the study with hash, with reports of d parameters.
func DecodeForwarded(b []byte, hash [32]byte, round, d int) (set []*secagg.Report, ok bool) {
	if len(b) < 44 || !bytes.Equal(b[:32], hash[:]) || binary.BigEndian.Uint64(b[32:]) != uint64(round) {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(b[40:]))
	size := secagg.ReportSize(d)
	if n < 0 || len(b) != 44+n*size {
		return nil, false
	}
	for i := range n {
		r, err := secagg.UnmarshalReport(b[44+i*size:44+(i+1)*size], d)
		if err != nil {
			return nil, false
		}
		set = append(set, r)
	}
	return set, true
}
