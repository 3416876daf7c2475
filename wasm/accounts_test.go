//go:build js && wasm

package main

import (
	"syscall/js"
	"testing"

	"github.com/fedcast/fedcast/shared/session"
)

// fakeStorage is a Web Storage object backed by a Go map (Node has no
// localStorage): getItem returns null for a missing key, setItem stores
// strings.
func fakeStorage(m map[string]string) js.Value {
	obj := js.Global().Get("Object").New()
	obj.Set("getItem", js.FuncOf(func(_ js.Value, a []js.Value) any {
		if v, ok := m[a[0].String()]; ok {
			return v
		}
		return nil
	}))
	obj.Set("setItem", js.FuncOf(func(_ js.Value, a []js.Value) any {
		m[a[0].String()] = a[1].String()
		return nil
	}))
	return obj
}

// TestWebStorageAccounts: the localStorage adapter is a session.AccountStore
// that reads back what it wrote, returns nil for a key never written, and
// reports a refused write as an error instead of failing the session.
func TestWebStorageAccounts(t *testing.T) {
	m := map[string]string{}
	obj := fakeStorage(m)
	var store session.AccountStore = &webStorage{obj}
	if b, err := store.LoadAccount("k"); b != nil || err != nil {
		t.Fatalf("missing key: %q, %v", b, err)
	}
	if err := store.SaveAccount("k", []byte(`{"steps":3}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := store.LoadAccount("k"); string(b) != `{"steps":3}` || err != nil || m["k"] != `{"steps":3}` {
		t.Fatalf("read back %q, %v; stored %q", b, err, m["k"])
	}
	// A full store throws from setItem (QuotaExceededError).
	obj.Set("setItem", js.Global().Get("Function").New("k", "v", "throw new Error('QuotaExceededError')"))
	if err := store.SaveAccount("k", []byte(`{"steps":4}`)); err == nil || m["k"] != `{"steps":3}` {
		t.Errorf("a full store: %v, stored %q", err, m["k"])
	}
}
