// Package ui holds fedcast's browser pages as vugu components: the LHA page
// (/join#TOKEN), where public-health staff check their CSV, take part in
// training and get a forecast, and the coordinator dashboard
// (/admin#TOKEN).
//
// # Layout
//
// Each component is a .vugu template with its logic in a .go file of the
// same name (line-chart.vugu, line_chart.go); `go generate` runs vugugen,
// which writes 0_components_gen.go (committed, so the package builds and
// vets on a fresh clone; regenerating must leave it unchanged). Page state
// lives in plain Go types (JoinState, AdminState) that the components only
// read: view state and words, no maths. Parsing and windows come from
// shared/series; the session, the training data, the forecast, its ranges
// and their coverage, the local test metrics, the numbers behind the
// guard's headline (session.Guarded, forecast.Guard) and the ε check (session.EpsilonMatches) from
// shared/session.
//
// # Imports
//
// ui imports only shared/... (and vugu): never wasm/ and never
// coordinator/. It does not dial: the browser entry point (package wasm)
// gives JoinState a Connector made with DialClient and its own
// session.Dialer; tests give it a fake Session.
//
// # Rendering from goroutines
//
// vugu re-renders after every DOM event. Work that takes time (reading a
// file, the websocket session, training) runs in a goroutine that changes
// state between env.Lock() and env.UnlockRender(), where env is the
// renderer's vugu.EventEnv. A goroutine that computes for long must also
// yield to the browser now and then (a short time.Sleep), or the page
// cannot repaint; see JoinState.
//
// # Words
//
// The pages speak to public-health staff, not to machine-learning
// engineers: ε is "privacy budget", an update is "the model changes
// computed here", and every error says what to do next.
package ui

//go:generate go tool vugugen -s -skip-go-mod -skip-main
//go:generate gofmt -w 0_components_gen.go
