// Module hooks for running @cloudflare/workers-oauth-provider under plain Node: it imports
// `WorkerEntrypoint` from the Workers runtime module `cloudflare:workers`, which only exists inside
// workerd. The provider only uses it for an `instanceof` check, so an empty class stands in.
export async function resolve(specifier, context, next) {
  if (specifier === 'cloudflare:workers') {
    return { url: 'data:text/javascript,export class WorkerEntrypoint {}', shortCircuit: true };
  }
  return next(specifier, context);
}
