package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/fedcast/fedcast/shared/fl"
)

// AccountStore keeps this LHA's local DP-SGD accountant across sessions of
// the same study on one machine (the browser's localStorage, see package
// wasm), so that a reload of the page remembers the steps it took. The
// session never imports a storage API: the page gives it one. Values are
// JSON text (an fl.LocalDPSGD: the setting and the accountant's runs of
// steps); nothing else of the LHA is stored.
type AccountStore interface {
	// LoadAccount returns what was saved under key, or nil, nil.
	LoadAccount(key string) ([]byte, error)
	// SaveAccount replaces what is saved under key.
	SaveAccount(key string, b []byte) error
}

// What the store changes, and what it does not: at its first welcome a
// session charges its fresh accountant for every released round and the
// open one (accountJoinedLate), which already covers every round any
// earlier session of this LHA could have sent an update in. The stored
// account adds what that charge cannot see: steps this machine spent on a
// round that was later abandoned (a coordinator restart discards an open
// round and numbers the next one the same, but the update had been sent).
// The session takes the larger of the two, never the smaller, so a lost
// or foreign store can only leave it where the charge puts it.

// MemAccountStore is an AccountStore in memory (tests, and native clients
// that keep one process per study).
type MemAccountStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// LoadAccount returns a copy of what was saved under key.
func (m *MemAccountStore) LoadAccount(key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.m[key]...), nil
}

// SaveAccount saves a copy of b under key.
func (m *MemAccountStore) SaveAccount(key string, b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[key] = append([]byte(nil), b...)
	return nil
}

// accountKey names this LHA's account for this study at this coordinator:
// a hash of the coordinator's address, the LHA's name and the public study
// parameters (no token). Another study, even with the same LHA name,
// has another key.
func (s *Session) accountKey() string {
	st, _ := json.Marshal(s.agreed) // a top-up keeps the account
	h := sha256.New()
	h.Write([]byte(s.wsURL + "\n" + s.lha + "\n"))
	h.Write(st)
	return "fedcast/local-dpsgd/" + hex.EncodeToString(h.Sum(nil))
}

// restoreAccount raises the local accountant to the stored one when that
// holds more steps of the same setting (s.mu held). An unreadable or
// foreign value is ignored: the charge of accountJoinedLate stands.
func (s *Session) restoreAccount() {
	c := s.strategy.client
	if s.opt.Accounts == nil || c == nil || c.DPSGD == nil {
		return
	}
	b, err := s.opt.Accounts.LoadAccount(s.accountKey())
	if err != nil || len(b) == 0 {
		return
	}
	var stored fl.LocalDPSGD
	if json.Unmarshal(b, &stored) != nil || stored.Setting != c.DPSGD.Setting {
		return
	}
	if extra := stored.Accountant.Steps() - c.DPSGD.Accountant.Steps(); extra > 0 {
		e := c.DPSGD.Setting
		c.DPSGD.Accountant.Compose(e.SampleRate, e.NoiseMultiplier, extra)
	}
	s.strategy.budget = budgetOf(c.DPSGD)
}

// saveAccount stores the local accountant with extra more steps composed
// (the steps about to be taken: saved before they are, so that a reload
// in the middle of training still counts them). A failed save changes
// nothing here: the accountant in memory is what this session obeys.
func (s *Session) saveAccount(d *fl.LocalDPSGD, extra int) {
	if s.opt.Accounts == nil || d == nil {
		return
	}
	v := fl.LocalDPSGD{Setting: d.Setting, Accountant: fl.LocalAccountant{Kind: d.Accountant.Kind, Events: append(d.Accountant.Events[:0:0], d.Accountant.Events...)}}
	v.Accountant.Compose(d.Setting.SampleRate, d.Setting.NoiseMultiplier, extra)
	b, err := json.Marshal(&v)
	if err != nil {
		return
	}
	s.opt.Accounts.SaveAccount(s.accountKey(), b)
}
