// Package e2e tests the Cloudflare worker (coordinator/worker) under
// workerd, the open-source Workers runtime, pinned in
// coordinator/worker/package.json (`npm ci` there installs it; .ci/run
// does): a study end to end with native `fedcast client`s, and a kill of
// workerd mid-study. Without workerd the tests skip, and fail when
// FEDCAST_CI=1.
package e2e
