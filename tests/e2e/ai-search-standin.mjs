// A stand-in for Cloudflare AI Search's namespace binding (`env.AI_SEARCH`), for the end-to-end tests under
// `wrangler dev`, where the real service cannot run. It has the binding's exact method shapes — `get(name)` (a
// synchronous handle), `create(config)`, and on an instance `info()`, `search(request)`, `stats()` and the
// `items` getter with `upload(name, content, {metadata})`, `list({page, per_page, key?})` and `delete(id)` —
// and behaves like the service where the server depends on it:
//   - `info()` of a missing instance throws an error named AiSearchNotFoundError;
//   - uploads are an upsert by name with an opaque id that is not the name, and are indexed asynchronously:
//     queued, then searchable after INDEX_DELAY_MS;
//   - metadata values must be strings (a number fails with invalid_metadata_format);
//   - `list` pages at most 50 per page;
//   - `search` chunks documents (~2,000 characters, 10% overlap), scores chunks by the share of query words
//     they contain, honours `filters` on itemtype, year and the built-in `folder` (a document's name up to its
//     last `/`: `groups/100001/` for `groups/100001/ABCD2345.md`), and returns at most max_num_results chunks
//     with `scoring_details.vector_score`.
// Its state lives in the isolate, like the Worker's own; wrangler dev keeps one isolate per run.

const INDEX_DELAY_MS = 150;
const CHUNK_CHARS = 2000;
const OVERLAP_CHARS = 200;

class NotFound extends Error {
  constructor(message) {
    super(message);
    this.name = 'AiSearchNotFoundError';
  }
}

class ServiceError extends Error {
  constructor(name, message) {
    super(message);
    this.name = name;
  }
}

const words = (text) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2);

function chunksOf(text) {
  const chunks = [];
  for (let start = 0; start < Math.max(text.length, 1); start += CHUNK_CHARS - OVERLAP_CHARS) {
    chunks.push(text.slice(start, start + CHUNK_CHARS));
    if (start + CHUNK_CHARS >= text.length) break;
  }
  return chunks;
}

const folderOf = (name) => name.slice(0, name.lastIndexOf('/') + 1);

function passes(filters, metadata, name) {
  if (!filters) return true;
  for (const [field, condition] of Object.entries(filters)) {
    const raw = field === 'folder' ? folderOf(name) : metadata?.[field];
    const value = field === 'year' ? Number(raw) : raw;
    for (const [op, wanted] of Object.entries(condition)) {
      if (op === '$eq' && value !== wanted) return false;
      if (op === '$ne' && value === wanted) return false;
      if (op === '$in' && !wanted.includes(value)) return false;
      if (op === '$nin' && wanted.includes(value)) return false;
      if (op === '$gte' && !(value >= wanted)) return false;
      if (op === '$lte' && !(value <= wanted)) return false;
    }
  }
  return true;
}

class Instance {
  constructor(config) {
    this.config = config;
    this.documents = new Map(); // name → {id, content, metadata, status, readyAt}
    this.nextId = 1;
    const instance = this;
    this.itemsApi = {
      async upload(name, content, options = {}) {
        const metadata = options.metadata ?? {};
        for (const [field, value] of Object.entries(metadata)) {
          if (typeof value !== 'string') {
            throw new ServiceError('AiSearchError', `invalid_metadata_format: ${field} must be a string`);
          }
        }
        const existing = instance.documents.get(name);
        const id = existing?.id ?? `itm_${(instance.nextId++).toString(36).padStart(6, '0')}`;
        instance.documents.set(name, { id, key: name, content: String(content), metadata, readyAt: Date.now() + INDEX_DELAY_MS });
        return { id, key: name, status: 'queued' };
      },
      async list(params = {}) {
        const perPage = Math.min(Number(params.per_page ?? 20), 50);
        const page = Math.max(Number(params.page ?? 1), 1);
        let all = [...instance.documents.values()];
        if (params.key) all = all.filter((d) => d.key === params.key);
        const result = all.slice((page - 1) * perPage, page * perPage).map((d) => ({ id: d.id, key: d.key, status: instance.status(d) }));
        return { result, result_info: { page, per_page: perPage, count: result.length, total_count: all.length } };
      },
      async delete(id) {
        for (const [name, d] of instance.documents) {
          if (d.id === id) {
            instance.documents.delete(name);
            return;
          }
        }
        throw new NotFound(`item ${id} not found`);
      },
    };
  }

  status(d) {
    return Date.now() >= d.readyAt ? 'completed' : 'queued';
  }

  get items() {
    return this.itemsApi;
  }

  async info() {
    return { id: this.config.id, ...this.config };
  }

  async stats() {
    const all = [...this.documents.values()];
    const completed = all.filter((d) => this.status(d) === 'completed');
    return {
      queued: all.length - completed.length,
      running: 0,
      completed: completed.length,
      error: 0,
      engine: { vectorize: { vectorsCount: completed.reduce((n, d) => n + chunksOf(d.content).length, 0), dimensions: 1024 } },
    };
  }

  async search(request) {
    const retrieval = request?.ai_search_options?.retrieval ?? {};
    const max = Math.min(Number(retrieval.max_num_results ?? 10), 50);
    const query = words(String(request?.query ?? ''));
    const scored = [];
    for (const d of this.documents.values()) {
      if (this.status(d) !== 'completed' || !passes(retrieval.filters, d.metadata, d.key)) continue;
      chunksOf(d.content).forEach((text, i) => {
        const present = new Set(words(text));
        const hits = query.filter((w) => present.has(w)).length;
        if (hits === 0) return;
        const score = hits / query.length;
        scored.push({
          id: `${d.id}-${i}`,
          type: 'text',
          score,
          text,
          item: { key: d.key, timestamp: Math.floor(d.readyAt / 1000), metadata: d.metadata },
          scoring_details: { vector_score: Number((0.3 + 0.6 * score).toFixed(4)), keyword_score: score, fusion_method: 'rrf' },
        });
      });
    }
    scored.sort((a, b) => b.score - a.score);
    return { search_query: request?.query ?? '', chunks: scored.slice(0, max) };
  }
}

export class AiSearchStandIn {
  constructor() {
    this.instances = new Map();
  }

  get(name) {
    const standIn = this;
    // A handle: the instance is looked up when a method runs, as the real binding does.
    const resolve = () => {
      const instance = standIn.instances.get(name);
      if (!instance) throw new NotFound(`AI Search instance ${name} not found`);
      return instance;
    };
    return {
      info: async () => resolve().info(),
      search: async (request) => resolve().search(request),
      stats: async () => resolve().stats(),
      get items() {
        return resolve().items;
      },
    };
  }

  async create(config) {
    if (this.instances.has(config.id)) throw new ServiceError('AiSearchError', `instance ${config.id} already exists`);
    this.instances.set(config.id, new Instance(config));
    return this.get(config.id);
  }
}
