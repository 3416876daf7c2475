package object

import (
	"fmt"
	"strings"
	"time"

	"github.com/fedcast/fedcast/coordinator/study"
	"github.com/fedcast/fedcast/shared/secagg"
)

// KeyState is where the check of the helper's key stands.
type KeyState string

const (
	// KeyAsking: the key is asked for and no answer has come yet (the
	// first check after a load).
	KeyAsking KeyState = "asking"
	// KeyMatches: the helper answered with the key the study names.
	KeyMatches KeyState = "matches"
	// KeyDiffers: the helper answered with another key; it refuses every
	// round.
	KeyDiffers KeyState = "differs"
	// KeyNoAnswer: the helper could not be reached, or answered something
	// that is not a helper's key.
	KeyNoAnswer KeyState = "no answer"
)

// HelperKey is the outcome of the last check of the helper's key, the
// admin status's "helper_key" (a study with a helper only).
type HelperKey struct {
	State KeyState `json:"state"`
	// CheckedAt is when the last answer, or the failure to get one, came
	// in; absent while the first check is out.
	CheckedAt *time.Time `json:"checked_at,omitempty"`
	// Words say the outcome in a sentence, with both fingerprints and
	// what to do; the worker's log has the same words.
	Words string `json:"words"`
	// StudyFingerprint is the fingerprint of the key the study file
	// names; HelperFingerprint the one the helper answered (absent
	// without an answer).
	StudyFingerprint  string `json:"study_fingerprint"`
	HelperFingerprint string `json:"helper_fingerprint,omitempty"`
}

// KeyFetch asks the Durable Object to GET URL (the helper's key) and to
// hand the answer back with [Object.HelperKeyAnswer] (status 0 and the
// error's words when the helper cannot be reached or does not answer
// within Timeout).
type KeyFetch struct {
	URL     string
	Timeout time.Duration
}

const (
	// keyRetry is how long after an answer that was not the study's key
	// the next tick asks again. A helper that is down may come up, and
	// one with another key may be restarted with the study's, neither of
	// which reloads the object; once a minute is nothing to the helper.
	keyRetry = time.Minute
	// keyTimeout bounds one key request (serve waits 5 s at its start;
	// nothing waits here, so a slow helper gets longer).
	keyTimeout = 10 * time.Second
)

// keyCheck is the object's check of the helper's key: asked at the first
// tick after a load (serve asks at its start), asked again at a tick a
// keyRetry or more after an answer that was not the study's key.
//
// Whatever the answer, the schedule goes on. serve refuses to start with
// another key, but a Worker cannot refuse to load, and holding the rounds
// back would gain nothing: a round the helper refuses is abandoned
// (nothing released, no privacy budget spent, the LHAs told), and a
// helper restarted with the study's key serves the next round without
// waiting for this check. So a key that differs is made loud instead: in
// the admin status, and in the log as a WARN.
type keyCheck struct {
	HelperKey
	url   string // the helper's base URL
	asked bool   // a KeyFetch is out, not answered yet
}

// newKeyCheck is the check of f's helper key, or nil for a study without
// a helper.
func newKeyCheck(f *study.File) (*keyCheck, error) {
	if f.Helper == nil {
		return nil, nil
	}
	want, err := secagg.ParsePublicKey(f.Helper.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("object: the study's helper key: %w", err)
	}
	k := &keyCheck{url: f.Helper.URL, HelperKey: HelperKey{State: KeyAsking, StudyFingerprint: want.Fingerprint()}}
	k.Words = fmt.Sprintf("the helper at %s has been asked for its key (the study names %s); no answer yet", k.url, k.StudyFingerprint)
	return k, nil
}

// due reports whether the key should be asked for at now.
func (k *keyCheck) due(now time.Time) bool {
	switch {
	case k == nil, k.asked, k.State == KeyMatches:
		return false
	case k.CheckedAt == nil:
		return true
	}
	return !now.Before(k.CheckedAt.Add(keyRetry))
}

// checkKey asks the Durable Object for the helper's key when it is due.
func (o *Object) checkKey(now time.Time) {
	if !o.key.due(now) {
		return
	}
	o.key.asked = true
	o.fx.KeyFetch = &KeyFetch{URL: study.HelperKeyURL(o.key.url), Timeout: keyTimeout}
}

// HelperKeyAnswer hands the helper's HTTP answer to the KeyFetch (status
// 0: no answer, statusText says why) to the object at now. The outcome
// goes to the admin status ([Object.AdminView]) and, when it changed, to
// the log. An answer not awaited changes nothing.
func (o *Object) HelperKeyAnswer(status int, statusText string, body []byte, now time.Time) *Effects {
	return o.call(func() {
		k := o.key
		if k == nil || !k.asked {
			o.fx.logf("an answer from the helper for its key, which is not awaited: ignored")
			return
		}
		k.asked = false
		before := k.HelperKey
		k.judge(status, statusText, body, now)
		if k.State != before.State || k.Words != before.Words {
			o.fx.logf("%s %s", k.level(), k.Words)
		}
	})
}

// judge reads the helper's answer into k.
func (k *keyCheck) judge(status int, statusText string, body []byte, now time.Time) {
	k.CheckedAt, k.HelperFingerprint = &now, ""
	var got *secagg.PublicKey
	err := fmt.Errorf("the helper at %s cannot be reached (%s)", k.url, statusText)
	if status != 0 {
		got, err = study.HelperKey(k.url, status, statusText, body)
	}
	switch {
	case err != nil:
		k.State = KeyNoAnswer
		k.Words = err.Error() + ". The rounds go on as scheduled, and each is abandoned (nothing released, no privacy budget spent) until the helper answers. " +
			"Ask its operator to start it ('fedcast helper serve') at that address. " + askAgain
	case got.Fingerprint() == k.StudyFingerprint:
		k.State, k.HelperFingerprint = KeyMatches, got.Fingerprint()
		k.Words = fmt.Sprintf("the helper at %s has the key the study file names (%s)", k.url, k.StudyFingerprint)
	default:
		k.State, k.HelperFingerprint = KeyDiffers, got.Fingerprint()
		k.Words = k.differs()
	}
}

// askAgain ends the words of an answer that was not the study's key.
const askAgain = "The Worker asks again at the schedule's first step (a round opening or closing, or an LHA joining while the study waits for LHAs) a minute or more after this check."

// differs says that the helper has another key, and what to do: the
// advice serve gives when it refuses to start.
func (k *keyCheck) differs() string {
	fix := study.HelperKeyFix(k.StudyFingerprint)
	return study.HelperKeyDiffers(k.url, k.HelperFingerprint, k.StudyFingerprint) + ", and each is abandoned (nothing released, no privacy budget spent). " +
		strings.ToUpper(fix[:1]) + fix[1:] + " (on the Worker a new study needs its own Durable Object: a new FEDCAST_STUDY_ID or worker name). " + askAgain
}

// level is the log level the outcome is logged at: anything but the
// study's key is a warning.
func (k *keyCheck) level() string {
	if k.State == KeyMatches {
		return "INFO"
	}
	return "WARN"
}
