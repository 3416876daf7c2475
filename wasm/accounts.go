//go:build js && wasm

package main

import (
	"errors"
	"syscall/js"
)

// webStorage is a session.AccountStore over a Web Storage object (the
// page's localStorage): this browser's local DP-SGD accountant of a study
// survives a reload of the page. Only the accountant (the public local
// DP-SGD setting and the number of steps taken) is stored, under a key
// that names the coordinator, the LHA and the study, never the token.
type webStorage struct{ v js.Value }

// localAccounts returns the page's localStorage as an AccountStore, or nil
// when the browser gives none (private modes may refuse it): the session
// then relies on its charge for the rounds so far alone.
func localAccounts() *webStorage {
	var ls js.Value
	func() {
		defer func() { recover() }() // reading localStorage can throw (SecurityError)
		ls = js.Global().Get("localStorage")
	}()
	if ls.IsUndefined() || ls.IsNull() {
		return nil
	}
	return &webStorage{ls}
}

// LoadAccount returns the stored text under key, or nil.
func (w *webStorage) LoadAccount(key string) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, errors.New("localStorage: cannot read")
		}
	}()
	v := w.v.Call("getItem", key)
	if v.IsNull() || v.IsUndefined() {
		return nil, nil
	}
	return []byte(v.String()), nil
}

// SaveAccount stores b (JSON text) under key.
func (w *webStorage) SaveAccount(key string, b []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("localStorage: cannot write (full or refused)")
		}
	}()
	w.v.Call("setItem", key, string(b))
	return nil
}
