package object

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The envelope carries Effects from the Go worker to the JavaScript
// Durable Object (and the init call's study file and stored state the
// other way) without putting weight vectors into JSON:
//
//	offset  size  field
//	0       4     magic "fcdo"
//	4       4     J, length of the JSON header, uint32 little-endian
//	8       J     JSON header (EffectsHeader for effects)
//	8+J     4     B, number of blobs, uint32
//	…             B times: length uint32, then the blob's bytes
//
// The header refers to blobs by index.

// ErrEnvelope is wrapped by every DecodeEnvelope error.
var ErrEnvelope = errors.New("object: malformed envelope")

const envelopeMagic = "fcdo"

// MaxEnvelope bounds a decoded envelope (the study file plus a state of
// the largest model the platform takes, with room to spare).
const MaxEnvelope = 256 << 20

// EffectsHeader is the JSON header of an effects envelope.
type EffectsHeader struct {
	// State is the blob index of the state to store, -1 for none.
	State int `json:"state"`
	// Sends are [conn, binary (0|1), blob index] in order.
	Sends [][3]int `json:"sends"`
	// Closes are the connections to close after the sends.
	Closes []CloseHeader `json:"closes"`
	// Alarm is the next wake-up in Unix milliseconds, 0 for none.
	Alarm int64    `json:"alarm"`
	Log   []string `json:"log,omitempty"`
	// Forwarded is the blob index of the forwarded set to store (under
	// its own key, with the state), -1 for none.
	Forwarded int `json:"forwarded"`
	// Fetch is the request to the helper to send after the closes.
	Fetch *FetchHeader `json:"fetch,omitempty"`
	// KeyFetch is the request for the helper's key (a GET, no body).
	KeyFetch *KeyFetchHeader `json:"key_fetch,omitempty"`
	// Reply is the answer to the admin request that made the call.
	Reply *ReplyHeader `json:"reply,omitempty"`
}

// ReplyHeader is a Reply in an envelope: Body is a blob index.
type ReplyHeader struct {
	Status int `json:"status"`
	Body   int `json:"body"`
}

// FetchHeader is a Fetch in an envelope: Body is a blob index.
type FetchHeader struct {
	URL           string `json:"url"`
	Round         int    `json:"round"`
	Body          int    `json:"body"`
	TimeoutMillis int64  `json:"timeout_ms"`
}

// KeyFetchHeader is a KeyFetch in an envelope.
type KeyFetchHeader struct {
	URL           string `json:"url"`
	TimeoutMillis int64  `json:"timeout_ms"`
}

// CloseHeader is one Close in an envelope.
type CloseHeader struct {
	Conn   int    `json:"conn"`
	Code   int    `json:"code"`
	Reason string `json:"reason"`
}

// EncodeEnvelope writes header (JSON-encoded) and blobs.
func EncodeEnvelope(header any, blobs [][]byte) ([]byte, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	n := 12 + len(h)
	for _, b := range blobs {
		n += 4 + len(b)
	}
	out := make([]byte, 0, n)
	out = append(out, envelopeMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h)))
	out = append(out, h...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(blobs)))
	for _, b := range blobs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// DecodeEnvelope reads an envelope: the JSON header's bytes and the blobs
// (slices of b). It never panics.
func DecodeEnvelope(b []byte) (header []byte, blobs [][]byte, err error) {
	if len(b) > MaxEnvelope {
		return nil, nil, fmt.Errorf("%w: %d bytes, at most %d", ErrEnvelope, len(b), MaxEnvelope)
	}
	if len(b) < 12 || string(b[:4]) != envelopeMagic {
		return nil, nil, fmt.Errorf("%w: no magic", ErrEnvelope)
	}
	j := binary.LittleEndian.Uint32(b[4:])
	rest := b[8:]
	if uint64(j) > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("%w: header of %d bytes in %d", ErrEnvelope, j, len(rest))
	}
	header, rest = rest[:j], rest[j:]
	if !json.Valid(header) {
		return nil, nil, fmt.Errorf("%w: header is not JSON", ErrEnvelope)
	}
	if len(rest) < 4 {
		return nil, nil, fmt.Errorf("%w: no blob count", ErrEnvelope)
	}
	nb := binary.LittleEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(nb)*4 > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("%w: %d blobs in %d bytes", ErrEnvelope, nb, len(rest))
	}
	blobs = make([][]byte, 0, nb)
	for i := range nb {
		if len(rest) < 4 {
			return nil, nil, fmt.Errorf("%w: blob %d has no length", ErrEnvelope, i)
		}
		l := binary.LittleEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(l) > uint64(len(rest)) {
			return nil, nil, fmt.Errorf("%w: blob %d of %d bytes in %d", ErrEnvelope, i, l, len(rest))
		}
		blobs = append(blobs, rest[:l:l])
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: %d bytes after the last blob", ErrEnvelope, len(rest))
	}
	return header, blobs, nil
}

// Encode writes fx as an envelope.
func (fx *Effects) Encode() ([]byte, error) {
	h := EffectsHeader{State: -1, Forwarded: -1, Sends: [][3]int{}, Closes: []CloseHeader{}, Log: fx.Log}
	var blobs [][]byte
	if fx.State != nil {
		h.State = len(blobs)
		blobs = append(blobs, fx.State)
	}
	if fx.Forwarded != nil {
		h.Forwarded = len(blobs)
		blobs = append(blobs, fx.Forwarded)
	}
	if f := fx.Fetch; f != nil {
		h.Fetch = &FetchHeader{URL: f.URL, Round: f.Round, Body: len(blobs), TimeoutMillis: f.Timeout.Milliseconds()}
		blobs = append(blobs, f.Body)
	}
	if k := fx.KeyFetch; k != nil {
		h.KeyFetch = &KeyFetchHeader{URL: k.URL, TimeoutMillis: k.Timeout.Milliseconds()}
	}
	if r := fx.Reply; r != nil {
		h.Reply = &ReplyHeader{Status: r.Status, Body: len(blobs)}
		blobs = append(blobs, r.Body)
	}
	// The same bytes sent to many connections (a round_result) travel once.
	index := map[*byte]int{}
	for _, s := range fx.Sends {
		bin := 0
		if s.Binary {
			bin = 1
		}
		i := -1
		if len(s.Data) > 0 {
			if j, ok := index[&s.Data[0]]; ok && len(blobs[j]) == len(s.Data) {
				i = j
			}
		}
		if i < 0 {
			i = len(blobs)
			blobs = append(blobs, s.Data)
			if len(s.Data) > 0 {
				index[&s.Data[0]] = i
			}
		}
		h.Sends = append(h.Sends, [3]int{s.Conn, bin, i})
	}
	for _, c := range fx.Closes {
		h.Closes = append(h.Closes, CloseHeader(c))
	}
	if !fx.Alarm.IsZero() {
		// Rounded up: an alarm never fires before its tick.
		ms := fx.Alarm.UnixMilli()
		if fx.Alarm.After(time.UnixMilli(ms)) {
			ms++
		}
		h.Alarm = max(1, ms)
	}
	return EncodeEnvelope(h, blobs)
}

// DecodeEffects reads an effects envelope back (for tests and tools).
func DecodeEffects(b []byte) (*Effects, error) {
	hb, blobs, err := DecodeEnvelope(b)
	if err != nil {
		return nil, err
	}
	var h EffectsHeader
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	blob := func(i int) ([]byte, error) {
		if i < 0 || i >= len(blobs) {
			return nil, fmt.Errorf("%w: blob %d of %d", ErrEnvelope, i, len(blobs))
		}
		return blobs[i], nil
	}
	fx := &Effects{Log: h.Log}
	if h.State >= 0 {
		if fx.State, err = blob(h.State); err != nil {
			return nil, err
		}
	}
	if h.Forwarded >= 0 {
		if fx.Forwarded, err = blob(h.Forwarded); err != nil {
			return nil, err
		}
	}
	if f := h.Fetch; f != nil {
		body, err := blob(f.Body)
		if err != nil {
			return nil, err
		}
		fx.Fetch = &Fetch{URL: f.URL, Round: f.Round, Body: body, Timeout: time.Duration(f.TimeoutMillis) * time.Millisecond}
	}
	if k := h.KeyFetch; k != nil {
		fx.KeyFetch = &KeyFetch{URL: k.URL, Timeout: time.Duration(k.TimeoutMillis) * time.Millisecond}
	}
	if r := h.Reply; r != nil {
		body, err := blob(r.Body)
		if err != nil {
			return nil, err
		}
		fx.Reply = &Reply{Status: r.Status, Body: body}
	}
	for _, s := range h.Sends {
		d, err := blob(s[2])
		if err != nil {
			return nil, err
		}
		fx.Sends = append(fx.Sends, Send{Conn: s[0], Binary: s[1] == 1, Data: d})
	}
	for _, c := range h.Closes {
		fx.Closes = append(fx.Closes, Close(c))
	}
	if h.Alarm > 0 {
		fx.Alarm = time.UnixMilli(h.Alarm)
	}
	return fx, nil
}
