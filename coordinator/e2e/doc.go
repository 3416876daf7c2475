// Package e2e holds fedcast's end-to-end tests: a real coordinator, simulated
// LHAs (shared/session running natively) and the browser app driven in Debian's
// headless Chromium through the DevTools protocol (chromedp).
//
// The tests build the app themselves (wasm/webbuild) into a temporary
// directory, so `go test ./coordinator/e2e/` works on a fresh clone. They
// need Chromium: /usr/bin/chromium, or the path in $FEDCAST_CHROMIUM. Without
// it they skip, except under FEDCAST_CI=1, where a missing browser fails.
//
// Screenshots of each stage are written as PNG files to $FEDCAST_ARTIFACTS,
// or to a fresh temporary directory whose path the tests log.
package e2e
