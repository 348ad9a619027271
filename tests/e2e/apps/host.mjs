// The browser side of the MCP Apps host harness (bundled by esbuild at test start, see harness.mjs): it plays the
// host a chat client such as Claude is, with the official host half of the protocol (AppBridge and
// PostMessageTransport from @modelcontextprotocol/ext-apps). One panel per page: mountPanel() puts the app's HTML
// in a sandboxed iframe (scripts only: an opaque origin, no access to this page), answers its ui/initialize with
// the host context, then sends the tool's input and result; everything the app asks for goes to Node through the
// functions harness.mjs exposes (__hostCallTool, __hostEvent), which calls the real server and records it.

import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const HOST_INFO = { name: 'zotero-mcp-e2e-host', version: '1.0.0' };

// What this host offers: the server's tools (proxied), links, model context (text), logging. No sampling, no
// messages into the conversation, no downloads: an app that needs them must cope without.
const HOST_CAPABILITIES = {
  openLinks: {},
  serverTools: {},
  updateModelContext: { text: {} },
  logging: {},
};

function record(kind, payload) {
  // Fire and forget: a recording must never hold up the app's request.
  window.__hostEvent(kind, JSON.parse(JSON.stringify(payload ?? null))).catch(() => {});
}

/**
 * Mounts one panel. `srcdoc` is the app's document (its CSP <meta> already in place), `hostContext` what
 * ui/initialize answers, `toolInput` the call's arguments and `toolResult` the server's tools/call result.
 * Resolves once the bridge listens; the app's own steps are recorded as they happen.
 */
window.mountPanel = async ({ srcdoc, hostContext, toolInput, toolResult }) => {
  const frame = document.createElement('iframe');
  frame.id = 'panel';
  frame.title = 'MCP App';
  frame.setAttribute('sandbox', 'allow-scripts');
  const width = hostContext.containerDimensions?.width ?? 720;
  frame.style.width = `${width}px`;
  frame.style.height = '120px';
  document.body.append(frame);

  const bridge = new AppBridge(null, HOST_INFO, HOST_CAPABILITIES, { hostContext });
  bridge.oncalltool = async (params) => {
    const answer = await window.__hostCallTool(params);
    if (answer.error) throw new Error(answer.error);
    return answer.result;
  };
  bridge.onopenlink = async (params) => {
    record('open-link', params);
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    record('update-model-context', params);
    return {};
  };
  bridge.onmessage = async (params) => {
    record('message', params);
    return { isError: true };
  };
  bridge.onloggingmessage = (params) => record('log', params);
  bridge.onsizechange = ({ width: w, height }) => {
    // As a host does: the frame takes the height the app asks for, its width stays the container's.
    if (typeof height === 'number') frame.style.height = `${Math.ceil(height)}px`;
    record('size', { width: w, height });
  };
  bridge.oninitialized = async () => {
    record('initialized', { app: bridge.getAppVersion() ?? null, capabilities: bridge.getAppCapabilities() ?? null });
    try {
      await bridge.sendToolInput({ arguments: toolInput });
      await bridge.sendToolResult(toolResult);
      record('delivered', {});
    } catch (error) {
      record('host-error', { message: String(error?.message ?? error) });
    }
  };
  bridge.onerror = (error) => record('host-error', { message: String(error?.message ?? error) });

  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  window.__bridge = bridge;
  frame.srcdoc = srcdoc;
};

/** Tells the mounted app the theme changed, as a host does when the person switches it. */
window.changeHostContext = (context) => window.__bridge.setHostContext(context);
