// The floor of the side-by-side bench (tests/bench/sidebyside.mjs): a Worker that does nothing, so what a POST
// to it costs is what `wrangler dev` (its proxy, workerd, the request and response plumbing) adds to any call.
export default {
  async fetch(request) {
    // Read the body as the real Worker does, so its transfer is part of the floor.
    await request.arrayBuffer();
    // With `x-floor-fetch: <url>`, one subrequest and its body too: the cost local workerd adds to every
    // outbound fetch, which both servers pay and neither can shorten.
    const target = request.headers.get('x-floor-fetch');
    if (target) await (await fetch(target)).arrayBuffer();
    return new Response(request.method === 'POST' ? '{}' : 'floor\n', {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  },
};
