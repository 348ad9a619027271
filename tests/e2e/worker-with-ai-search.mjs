// The end-to-end tests' Worker entry (tests/e2e/wrangler.test.toml `main`): the release build, unchanged, with
// the AI Search stand-in (ai-search-standin.mjs) added to its environment as `AI_SEARCH`, the binding the real
// service provides in production. The production bundle (build/worker/shim.mjs) is not touched; only the test
// configuration points here.
import Worker from '../../build/worker/shim.mjs';
import { AiSearchStandIn } from './ai-search-standin.mjs';

export * from '../../build/worker/shim.mjs';

// One per isolate, so what the cron indexed is what a later search finds.
const aiSearch = new AiSearchStandIn();

const withAiSearch = (env) =>
  new Proxy(env, {
    get: (target, name, receiver) => (name === 'AI_SEARCH' ? aiSearch : Reflect.get(target, name, receiver)),
    has: (target, name) => name === 'AI_SEARCH' || Reflect.has(target, name),
  });

export default class extends Worker {
  constructor(ctx, env) {
    super(ctx, withAiSearch(env));
  }
}
