// Package e2e tests the Cloudflare worker (coordinator/worker) under
// workerd, the open-source Workers runtime, pinned in
// coordinator/worker/package.json (`npm ci` there installs it; .ci/run
// does): a study end to end with native `fedcast client`s, a kill of
// workerd mid-study, and the browser page (served by the worker as static
// assets, driven in headless Chromium) joining a study beside native
// clients. Without workerd or Chromium the tests skip, and fail when
// FEDCAST_CI=1. TestLoad is an opt-in experiment (FEDCAST_WORKER_LOAD=N;
// docs/deploy-cloudflare.md).
package e2e
