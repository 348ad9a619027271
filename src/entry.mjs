// The Worker's JavaScript entry: what `wrangler.toml` serves (scripts/build.sh copies it to
// build/worker/shim.mjs, beside the wasm-bindgen glue `index.js` and the optimized `index_bg.wasm`).
//
// It hands each event to the Rust entry points (`#[event(fetch)]`, `#[event(scheduled)]` in src/lib.rs) and
// exports the Durable Object class (src/counters.rs).
//
// After a trap (a Rust panic aborts the wasm instance) the glue itself starts a fresh instance on the next call:
// it is built with `--experimental-reset-state-function --force-enable-abort-handler`, and workers-rs asks for the
// fresh start from its abort hook. Each start bumps `instanceId` in the state workers-rs shares with JavaScript
// (`__worker_init_state`). What this file adds is the Durable Object's Rust half: an object made by the old
// instance cannot be called on the new one, so it is made again when the instance changed.
//
// tests/e2e/worker-entry/ checks that every entry point the glue exports is handled here and that requests after
// a trap are served, the Durable Object's included.
import { WorkerEntrypoint } from "cloudflare:workers";
import * as glue from "../index.js";

// { criticalError, instanceId }, an object of workers-rs's JavaScript snippet.
const initState = glue.__worker_init_state();

export default class ZoteroMcp extends WorkerEntrypoint {
  fetch(request) {
    return glue.fetch(request, this.env, this.ctx);
  }

  scheduled(controller) {
    return glue.scheduled(controller, this.env, this.ctx);
  }
}

// The login throttle's and the registration limit's exact counters (wrangler.toml `ATTEMPT_COUNTERS`).
export class AttemptCounters {
  constructor(state, env) {
    this.state = state;
    this.env = env;
    this.rust = null;
    this.instanceId = -1;
  }

  fetch(request) {
    if (this.rust === null || this.instanceId !== initState.instanceId) {
      this.rust = new glue.AttemptCounters(this.state, this.env);
      this.instanceId = initState.instanceId;
    }
    return this.rust.fetch(request);
  }
}
