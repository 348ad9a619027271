// The floor of the side-by-side bench (tests/bench/sidebyside.mjs): a Worker that does nothing, so what a POST
// to it costs is what `wrangler dev` (its proxy, workerd, the request and response plumbing) adds to any call.
export default {
  async fetch(request) {
    // Read the body as the real Worker does, so its transfer is part of the floor.
    await request.arrayBuffer();
    // With `x-floor-fetch: <url>`, subrequests and their bodies too: the cost local workerd adds to outbound
    // fetches, which both servers pay and neither can shorten. `x-floor-fetch-count: N` sends N at once (each
    // with its own query, so nothing along the way can merge them), as a server does for independent requests.
    const target = request.headers.get('x-floor-fetch');
    if (target) {
      const count = Math.min(8, Math.max(1, Number(request.headers.get('x-floor-fetch-count') ?? 1) || 1));
      const url = (i) => (i === 0 ? target : `${target}${target.includes('?') ? '&' : '?'}n=${i}`);
      await Promise.all(Array.from({ length: count }, (_, i) => fetch(url(i)).then((r) => r.arrayBuffer())));
    }
    return new Response(request.method === 'POST' ? '{}' : 'floor\n', {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  },
};
