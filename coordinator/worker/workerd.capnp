# workerd configuration of the fedcast worker (built by `make worker` into
# bin/worker beside app.wasm, wasm_exec.js and worker.mjs). Run it with
#
#   FEDCAST_STUDY="$(cat study.json)" workerd serve bin/worker/workerd.capnp \
#     --socket-addr http=127.0.0.1:8787 \
#     --directory-path web=$PWD/bin/web --directory-path do-storage=$PWD/state/worker
#
# (docs/deploy-cloudflare.md). The paths below are the defaults relative to
# the repository; the command line overrides them.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .fedcast),
    # The browser app (`make web`), served as static assets.
    (name = "web", disk = (path = "bin/web")),
    # The Durable Objects' storage (SQLite files, one per study).
    (name = "do-storage", disk = (path = "state/worker", writable = true)),
    # Outbound fetch (the study's helper, in a study with one). workerd's
    # default reaches public addresses only; a local run may have its
    # helper on this machine (fedcast helper serve --addr 127.0.0.1:PORT).
    (name = "internet", network = (allow = ["public", "local"], tlsOptions = (trustBrowserCas = true))),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const fedcast :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "app.wasm", wasm = embed "app.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  # No permessage-deflate, even when the client offers it (browsers do):
  # a dummy's zeros would shrink on the wire and tell who was picked
  # (docs/privacy.md, "What an observer on the network sees"). Keep in
  # step with wrangler.toml.
  compatibilityFlags = ["no_web_socket_compression"],
  bindings = [
    # The study file (JSON). It holds only hashes of the tokens, but is
    # kept as a secret on Cloudflare all the same.
    (name = "FEDCAST_STUDY", fromEnvironment = "FEDCAST_STUDY"),
    (name = "ASSETS", service = "web"),
    (name = "STUDY", durableObjectNamespace = "Study"),
  ],
  durableObjectNamespaces = [(className = "Study", uniqueKey = "fedcast-study", enableSql = true)],
  durableObjectStorage = (localDisk = "do-storage"),
);
