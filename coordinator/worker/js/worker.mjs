// fedcast coordinator on Cloudflare Workers: the JavaScript glue.
//
// The entry worker routes /api/* to the study's Durable Object and serves
// the browser app from the static assets (env.ASSETS). The Durable Object
// (class Study, one per study) holds the websockets, the storage and the
// alarm, and hands every event, with the time it happened, to the Go
// program (app.wasm, an http.Handler served by syumai/workers; the logic
// is coordinator/worker/object). Go answers with effects: the state (and,
// with a helper, the forwarded report set) to store first, the frames to
// send, the sockets to close, a request to the study's helper (for a
// round's share, or for its key), the next alarm.
// This file decides nothing about the study.

import "./wasm_exec.js";
import mod from "./app.wasm";

// syumai/workers' Go side calls globalThis.tryCatch.
globalThis.tryCatch = (fn) => {
  try {
    return { result: fn() };
  } catch (e) {
    return { error: e };
  }
};

// A running instance of the Go program. It stays alive (its main blocks)
// so that the study's engine lives in it between calls.
class GoProgram {
  static async start(env) {
    const go = new Go();
    const binding = {};
    let ready;
    const isReady = new Promise((resolve) => (ready = resolve));
    const instance = new WebAssembly.Instance(mod, {
      ...go.importObject,
      workers: { ready: () => ready() },
    });
    const p = new GoProgram();
    p.binding = binding;
    p.memory = instance.exports.mem;
    p.exited = false;
    go.run(instance, { env, ctx: {}, binding }).finally(() => (p.exited = true));
    await isReady;
    return p;
  }

  // request serves an HTTP request with the Go http.Handler (syumai/workers).
  async request(path, init) {
    if (this.exited) throw new Error("fedcast: the Go program has exited");
    return this.binding.handleRequest(new Request("https://fedcast.internal" + path, init));
  }

  // call hands one Durable Object event to Go (synchronously) and returns
  // the effects envelope, or {refused} for a refused connection.
  call(op, conn, data, binary = false, origin = "", host = "", addr = "") {
    if (this.exited) throw new Error("fedcast: the Go program has exited");
    const r = this.binding.call(op, conn, Date.now(), binary, data || null, origin, host, addr);
    if (typeof r === "string") return { refused: r };
    if (r instanceof Error) throw r;
    return r;
  }
}

// The Go program of the entry worker (static pages' headers), one per isolate.
let entryProgram;

const STATIC = {
  "/wasm_exec.js": ["wasm_exec.js", "text/javascript; charset=utf-8", false],
  "/vugu-render.js": ["vugu-render.js", "text/javascript; charset=utf-8", false],
  "/main.wasm": ["main.wasm", "application/wasm", true],
};
const PAGES = new Set(["/", "/join", "/join/", "/admin", "/admin/"]);

async function serveStatic(req, env) {
  const url = new URL(req.url);
  if (!env.ASSETS) return new Response("fedcast: no static assets bound", { status: 404 });
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("web: method not allowed", { status: 405, headers: { Allow: "GET, HEAD" } });
  }
  const headers = new Headers({
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
  });
  const asset = (name) => env.ASSETS.fetch(new Request(new URL("/" + name, url)));
  if (PAGES.has(url.pathname)) {
    const res = await asset("index.html");
    if (!res.ok) return new Response("web: the browser app is not built: run `make web`", { status: 503 });
    const page = await res.arrayBuffer();
    if (!entryProgram || entryProgram.exited) entryProgram = await GoProgram.start(env);
    const csp = await entryProgram.request("/web/csp", { method: "POST", body: page });
    headers.set("Content-Security-Policy", await csp.text());
    headers.set("Content-Type", "text/html; charset=utf-8");
    return new Response(req.method === "HEAD" ? null : page, { headers });
  }
  const f = STATIC[url.pathname];
  if (!f) return new Response("404 page not found", { status: 404, headers });
  const [name, type, gz] = f;
  headers.set("Content-Type", type);
  headers.set("Content-Security-Policy", "default-src 'self'");
  if (gz) {
    headers.append("Vary", "Accept-Encoding");
    if (/\bgzip\b/.test(req.headers.get("Accept-Encoding") || "")) {
      const z = await asset(name + ".gz");
      if (z.ok) {
        headers.set("Content-Encoding", "gzip");
        // encodeBody "manual": the bytes are gzip already.
        return new Response(req.method === "HEAD" ? null : z.body, { headers, encodeBody: "manual" });
      }
    }
  }
  const res = await asset(name);
  if (!res.ok) return new Response(`web: ${name} is missing: run \`make web\``, { status: 404, headers });
  return new Response(req.method === "HEAD" ? null : res.body, { headers });
}

function studyObject(env) {
  return env.STUDY.get(env.STUDY.idFromName(env.FEDCAST_STUDY_ID || "study"));
}

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/api/ws" || url.pathname === "/api/status" || url.pathname.startsWith("/api/admin/")) {
      return studyObject(env).fetch(req);
    }
    return serveStatic(req, env);
  },
};

// Storage layout: "state" holds {gen, chunks, bytes}; the state bytes are
// under "state/<gen>/<i>", at most CHUNK bytes each (a stored value's
// limit is 128 KiB on the key-value backend). A new state is written
// under a new generation and "state" last, in one batch without an await
// in between (the platform commits such a batch atomically; even if it
// did not, "state" would point at a complete generation), then the old
// generation is deleted.
const CHUNK = 120 * 1024;

async function loadState(storage, key = "state") {
  const head = await storage.get(key);
  if (!head) return null;
  const keys = [];
  for (let i = 0; i < head.chunks; i++) keys.push(`${key}/${head.gen}/${i}`);
  const out = new Uint8Array(head.bytes);
  let off = 0;
  for (let i = 0; i < keys.length; i += 128) {
    const got = await storage.get(keys.slice(i, i + 128));
    for (const k of keys.slice(i, i + 128)) {
      const v = got.get(k);
      if (!v) throw new Error(`fedcast: stored ${key} is missing ${k}`);
      out.set(new Uint8Array(v), off);
      off += v.byteLength;
    }
  }
  if (off !== head.bytes) throw new Error(`fedcast: stored ${key} has ${off} bytes, its head says ${head.bytes}`);
  return out;
}

// saveState writes bytes under key ("state", or "forwarded": the report
// set of a study with a helper forwarded for a round) in the layout above.
function saveState(storage, bytes, prev, key = "state") {
  const gen = (prev ? prev.gen : 0) + 1;
  const chunks = Math.ceil(bytes.byteLength / CHUNK);
  for (let i = 0; i < chunks; i++) {
    storage.put(`${key}/${gen}/${i}`, bytes.slice(i * CHUNK, (i + 1) * CHUNK));
  }
  const head = { gen, chunks, bytes: bytes.byteLength };
  storage.put(key, head);
  if (prev) {
    const old = [];
    for (let i = 0; i < prev.chunks; i++) old.push(`${key}/${prev.gen}/${i}`);
    for (let i = 0; i < old.length; i += 128) storage.delete(old.slice(i, i + 128));
  }
  return head;
}

// decodeEffects reads the envelope of coordinator/worker/object (a
// Uint8Array of its own).
function decodeEffects(u8) {
  const buf = u8.buffer;
  const dv = new DataView(buf);
  const magic = new TextDecoder().decode(new Uint8Array(buf, 0, 4));
  if (magic !== "fcdo") throw new Error("fedcast: bad effects envelope");
  const j = dv.getUint32(4, true);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 8, j)));
  let off = 8 + j;
  const n = dv.getUint32(off, true);
  off += 4;
  const blobs = [];
  for (let i = 0; i < n; i++) {
    const l = dv.getUint32(off, true);
    off += 4;
    blobs.push(new Uint8Array(buf, off, l));
    off += l;
  }
  return { head, blobs };
}

// encodeEnvelope writes the envelope of coordinator/worker/object: a JSON
// header and blobs (the init call's, the helper's answer).
function encodeEnvelope(header, blobs) {
  const h = new TextEncoder().encode(JSON.stringify(header));
  let n = 12 + h.byteLength;
  for (const b of blobs) n += 4 + b.byteLength;
  const out = new Uint8Array(n);
  const dv = new DataView(out.buffer);
  out.set(new TextEncoder().encode("fcdo"), 0);
  dv.setUint32(4, h.byteLength, true);
  out.set(h, 8);
  let off = 8 + h.byteLength;
  dv.setUint32(off, blobs.length, true);
  off += 4;
  for (const b of blobs) {
    dv.setUint32(off, b.byteLength, true);
    out.set(b, off + 4);
    off += 4 + b.byteLength;
  }
  return out;
}

// fetchAnswer sends one request to the study's helper and returns its
// status, status line and body, or status 0 and why there is none (not
// reached, or no answer within timeoutMs).
async function fetchAnswer(url, init, timeoutMs) {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const answer = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, statusText: `${res.status} ${res.statusText}`, answer };
  } catch (e) {
    return { status: 0, statusText: String((e && e.message) || e), answer: new Uint8Array(0) };
  }
}

export class Study {
  constructor(state, env) {
    this.state = state;
    this.storage = state.storage;
    this.env = env;
    this.sockets = new Map(); // conn id → WebSocket
    this.nextConn = 1;
    this.head = null;
    this.forwardedHead = null;
    this.alarmAt = null;
    this.memoryPeak = 0;
    // Nothing else runs until the study is loaded (the Go program started,
    // the stored state handed to it, the alarm re-armed from it).
    state.blockConcurrencyWhile(() => this.load());
  }

  async load() {
    this.program = await GoProgram.start(this.env);
    const study = this.env.FEDCAST_STUDY;
    if (!study) throw new Error("fedcast: the FEDCAST_STUDY secret (the study file) is not set");
    this.head = (await this.storage.get("state")) || null;
    const stored = await loadState(this.storage);
    this.forwardedHead = (await this.storage.get("forwarded")) || null;
    const forwarded = await loadState(this.storage, "forwarded");
    const blobs = [new TextEncoder().encode(study), stored || new Uint8Array(0)];
    if (forwarded) blobs.push(forwarded);
    this.alarmAt = await this.storage.getAlarm();
    this.apply(this.program.call("init", 0, encodeEnvelope({ now: Date.now() }, blobs)));
  }

  // run hands one event to Go and applies its effects. Nothing in it
  // awaits, so events never interleave: Go sees them one at a time, in
  // the order the runtime delivers them, and each event's frames go out
  // in the order Go produced them.
  run(op, conn, data, binary, origin, host, addr, later = false) {
    if (this.program.exited) {
      // A Go program that died (out of memory, a panic) leaves the study
      // to a fresh object: the open round is abandoned, the committed
      // state is in storage.
      for (const ws of this.sockets.values()) ws.close(1011, "coordinator restarting");
      this.sockets.clear();
      this.state.abort?.("the Go program exited");
      throw new Error("fedcast: the Go program exited");
    }
    const r = this.program.call(op, conn, data, binary, origin, host, addr);
    if (r.refused) return r;
    if (later) return { effects: r }; // applied by the caller
    this.apply(r);
    return {};
  }

  apply(buf) {
    const { head, blobs } = decodeEffects(buf);
    for (const line of head.log || []) console.log(line);
    const mem = this.program.memory.buffer.byteLength;
    if (mem > this.memoryPeak) {
      this.memoryPeak = mem;
      console.log(`Go program memory: ${(mem / 1048576).toFixed(1)} MiB (a Worker may use 128 MB)`);
    }
    if (head.state >= 0) {
      // Commit before release: the state is written here, and the
      // platform's output gate holds every frame sent after a write until
      // the write is durable (and breaks the connections if it fails).
      this.head = saveState(this.storage, blobs[head.state], this.head);
    }
    if (head.forwarded >= 0) {
      // The report set forwarded to the helper, stored before the request
      // leaves (the output gate holds it until the write is durable): a
      // round reopened after a restart forwards the same set again.
      this.forwardedHead = saveState(this.storage, blobs[head.forwarded], this.forwardedHead, "forwarded");
    }
    const broken = new Set();
    for (const [conn, binary, i] of head.sends) {
      const ws = this.sockets.get(conn);
      if (!ws || broken.has(conn)) continue;
      try {
        ws.send(binary ? blobs[i] : new TextDecoder().decode(blobs[i]));
      } catch (e) {
        broken.add(conn); // closed under us: its close event may never come
      }
    }
    for (const c of head.closes) {
      const ws = this.sockets.get(c.conn);
      this.sockets.delete(c.conn);
      if (ws) {
        try {
          ws.close(c.code, c.reason);
        } catch (e) {}
      }
    }
    if (head.fetch) this.askHelper(head.fetch, blobs[head.fetch.body].slice());
    if (head.key_fetch) this.askHelperKey(head.key_fetch);
    // The answer to the admin request that made the call (a top-up).
    const reply = head.reply ? { status: head.reply.status, body: blobs[head.reply.body].slice() } : null;
    if (head.alarm > 0 && head.alarm !== this.alarmAt) {
      this.storage.setAlarm(head.alarm);
      this.alarmAt = head.alarm;
    } else if (head.alarm === 0 && this.alarmAt) {
      this.storage.deleteAlarm();
      this.alarmAt = null;
    }
    // Last, so that the calls they make come after this call's effects.
    for (const conn of broken) {
      const ws = this.sockets.get(conn);
      if (!ws) continue;
      this.sockets.delete(conn);
      try {
        ws.close(1011, "send failed");
      } catch (e) {}
      this.run("disconnect", conn);
    }
    return reply;
  }

  // askHelper posts one round's report IDs and sealed seeds to the
  // study's helper and hands its answer (or why there is none: status 0)
  // back to Go, which combines the shares or abandons the round.
  async askHelper(f, body) {
    const { status, statusText, answer } = await fetchAnswer(f.url, {
      method: "POST",
      body,
      headers: { "Content-Type": "application/json" },
    }, f.timeout_ms);
    try {
      this.run("helper", 0, encodeEnvelope({ round: f.round, status, status_text: statusText }, [answer]));
    } catch (e) {
      // The Go program exited meanwhile: the next object reopens the
      // round and forwards the stored set again.
      console.log(`fedcast: the helper's answer to round ${f.round} was not taken: ${e}`);
    }
  }

  // askHelperKey asks the study's helper for its public key (GET) and
  // hands the answer (or why there is none: status 0) back to Go, which
  // compares it with the study's key and says the outcome in the admin
  // status and the log. Nothing waits for it: the rounds go on.
  async askHelperKey(f) {
    const { status, statusText, answer } = await fetchAnswer(f.url, { method: "GET" }, f.timeout_ms);
    try {
      this.run("helper_key", 0, encodeEnvelope({ status, status_text: statusText }, [answer]));
    } catch (e) {
      // The Go program exited meanwhile: the next object asks again.
      console.log(`fedcast: the helper's key was not taken: ${e}`);
    }
  }

  async alarm() {
    this.alarmAt = null;
    this.run("alarm", 0);
  }

  // topUp is POST /api/admin/topup, the admin's top-up: Go checks the
  // token and records the top-up in the state; the answer goes out after
  // the state is written (the output gate holds it until it is durable).
  async topUp(req) {
    if (req.method !== "POST") {
      return new Response("POST only", { status: 405, headers: { Allow: "POST" } });
    }
    const body = new Uint8Array(await req.arrayBuffer());
    if (body.byteLength > 65536) return new Response("body too large", { status: 413 });
    const auth = req.headers.get("Authorization") || "";
    const r = this.run("topup", 0, encodeEnvelope({ authorization: auth }, [body]), false, "", "", "", true);
    const reply = this.apply(r.effects);
    return new Response(reply.body, {
      status: reply.status,
      headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
    });
  }

  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/api/admin/topup") return this.topUp(req);
    if (url.pathname !== "/api/ws") {
      const headers = new Headers();
      const auth = req.headers.get("Authorization");
      if (auth) headers.set("Authorization", auth);
      return this.program.request(url.pathname, { headers });
    }
    if (req.headers.get("Upgrade") !== "websocket") {
      return new Response("websocket expected", { status: 426 });
    }
    const conn = this.nextConn++;
    // The join token comes in the handshake (Sec-WebSocket-Protocol): Go
    // checks it here, before any socket exists. A refused token is
    // answered on the socket (an error frame, then close: a browser sees
    // no HTTP status); an address past its limit of failed attempts gets
    // HTTP 429 and no socket.
    const protocols = req.headers.get("Sec-WebSocket-Protocol") || "";
    const r = this.run("connect", conn, new TextEncoder().encode(protocols), false,
      req.headers.get("Origin") || "", url.host, req.headers.get("CF-Connecting-IP") || "", true);
    if (r.refused) {
      const status = r.refused.startsWith("too many") ? 429 : 403;
      return new Response(r.refused, { status, headers: status === 429 ? { "Retry-After": "60" } : {} });
    }
    const [client, server] = Object.values(new WebSocketPair());
    // Not the hibernation API: an open round's updates live in memory
    // only (never in storage), so the object must stay in memory while
    // LHAs are connected.
    server.accept();
    // Binary frames as ArrayBuffers (newer compatibility dates default to
    // Blobs, which can only be read asynchronously).
    server.binaryType = "arraybuffer";
    this.sockets.set(conn, server);
    this.apply(r.effects); // the welcome, or the refusal and the close
    const gone = () => {
      if (this.sockets.get(conn) === server) {
        this.sockets.delete(conn);
        this.run("disconnect", conn);
      }
    };
    server.addEventListener("message", (ev) => {
      const binary = typeof ev.data !== "string";
      const data = binary ? new Uint8Array(ev.data) : new TextEncoder().encode(ev.data);
      this.run("message", conn, data, binary);
    });
    server.addEventListener("close", gone);
    server.addEventListener("error", gone);
    // The protocol's subprotocol is selected when offered (a browser that
    // offered subprotocols needs one back, one that offered none must get
    // none); the token's is never echoed.
    const offered = protocols.split(",").some((p) => p.trim() === "fedcast.v1");
    const headers = offered ? { "Sec-WebSocket-Protocol": "fedcast.v1" } : {};
    return new Response(null, { status: 101, webSocket: client, headers });
  }
}
