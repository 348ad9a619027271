// The MCP Apps host harness for tests/e2e/apps.test.mjs: Debian's Chromium (driven by puppeteer-core, which
// never downloads a browser), a host page served on loopback that plays a chat client's part with the official
// AppBridge (host.mjs, bundled by esbuild into a temporary directory at start), and a plain-fetch MCP client of
// the 2025 era that declares the MCP Apps extension or not.
//
// What the host does is what a host such as Claude does: the app's HTML goes into an iframe sandboxed to scripts
// only, under a CSP built from the resource's `_meta.ui.csp` (so an app loading anything it did not declare fails
// the test: every violation is recorded), with a host context (theme, locale, style variables, a 720 × ≤500
// container); it sends the call's input and result, proxies the app's tools/call to the real server with the
// conversation's bearer token and session, and records every proxied call, link, model-context update and size.
// Everything started here is stopped by close(), and by itself after HARNESS_LIFETIME_MS at the latest.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { LATEST_LEGACY_VERSION, WRITE_SCOPES, accessToken, decodeResponse, mcpUrl } from '../helpers.mjs';

export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
export const MCP_APP_MIME = 'text/html;profile=mcp-app';
export const REVIEW_META = 'io.github.zotero-mcp/review';
export const ANSWER_META = 'io.github.zotero-mcp/answer';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');

/** The longest the browser, the host page's server and their temp files live, whatever happens to the test. */
const HARNESS_LIFETIME_MS = 5 * 60_000;
/** Default bound of one wait on the panel. */
export const WAIT_MS = 10_000;
/** Bound of one request to the server (a reference check asks the metadata services: seconds, not ten). */
export const RPC_MS = 30_000;

/**
 * The Chromium to drive: CHROMIUM_PATH when set (and only it), else Debian's (scripts/setup.sh installs it).
 * Undefined: none here.
 */
export function chromiumPath() {
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((candidate) => existsSync(candidate));
}

// ---------------------------------------------------------------------------------------------------------------
// The MCP side: plain fetch JSON-RPC, 2025 era (initialize, then one POST a request).

let nextRpcId = 1000;

/**
 * A client of the 2025 era. `apps` declares the MCP Apps extension in initialize; the server then answers with
 * an Mcp-Session-Id, which every later request carries. `bare` sends no initialize at all (what the raw-HTTP
 * tests of this suite have always done).
 */
export class McpClient {
  constructor({ apps = false, bare = false, scopes = WRITE_SCOPES, name = 'zotero-mcp-e2e-apps' } = {}) {
    this.apps = apps;
    this.bare = bare;
    this.scopes = scopes;
    this.name = name;
    this.sessionId = undefined;
    this.protocolVersion = undefined;
    this.initializeResponse = undefined;
  }

  async headers() {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${await accessToken(this.scopes)}`,
    };
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  async connect() {
    if (this.bare) return this;
    const capabilities = this.apps ? { extensions: { [UI_EXTENSION]: { mimeTypes: [MCP_APP_MIME] } } } : {};
    const res = await this.post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_LEGACY_VERSION, capabilities, clientInfo: { name: this.name, version: '1.0.0' } },
    });
    assert.equal(res.status, 200, `initialize: ${res.status} ${res.text.slice(0, 300)}`);
    assert.ok(res.json?.result, `initialize: ${res.text.slice(0, 300)}`);
    this.initializeResponse = res;
    this.sessionId = res.headers.get('mcp-session-id') ?? undefined;
    this.protocolVersion = res.json.result.protocolVersion;
    const initialized = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.ok(initialized.status === 202 || initialized.status === 200, `notifications/initialized: ${initialized.status}`);
    return this;
  }

  /** POSTs one JSON-RPC message; the decoded answer ({ status, headers, text, json }). */
  async post(body) {
    const res = await fetch(mcpUrl(), {
      method: 'POST',
      headers: await this.headers(),
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(RPC_MS),
    });
    return decodeResponse(res);
  }

  /** A request with `id` (a fresh one unless given): the decoded answer. */
  rpc(method, params, id = nextRpcId++) {
    return this.post({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
  }

  /** A request's `result`, failing the test on an HTTP or JSON-RPC error. */
  async result(method, params) {
    const res = await this.rpc(method, params);
    assert.equal(res.status, 200, `${method}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    assert.ok(res.json?.result, `${method}: ${res.text.slice(0, 500)}`);
    return res.json.result;
  }

  /** tools/call with these arguments (and any other params: inputResponses, requestState, _meta): the result. */
  callTool(name, args, extra = {}) {
    return this.result('tools/call', { name, arguments: args, ...extra });
  }

  async tools() {
    return (await this.result('tools/list', {})).tools;
  }

  async tool(name) {
    const found = (await this.tools()).find((tool) => tool.name === name);
    assert.ok(found, `${name} is not in tools/list`);
    return found;
  }

  async readResource(uri) {
    const result = await this.result('resources/read', { uri });
    assert.equal(result.contents?.length, 1, `resources/read ${uri}: ${JSON.stringify(result).slice(0, 300)}`);
    return result.contents[0];
  }
}

/** Concatenated text blocks of a tool result. */
export function textOf(result) {
  return (result?.content ?? []).filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// What the host puts around the app.

/**
 * The Content-Security-Policy a host derives from a UI resource's `_meta.ui.csp`: nothing by default, inline
 * script and style (the app is one document), and the declared origins for what it loads and connects to.
 */
export function cspFor(csp = {}) {
  const resources = (csp.resourceDomains ?? []).join(' ');
  const connect = (csp.connectDomains ?? []).join(' ') || "'none'";
  const list = (...sources) => sources.filter(Boolean).join(' ');
  return [
    "default-src 'none'",
    `script-src ${list("'unsafe-inline'", resources)}`,
    `style-src ${list("'unsafe-inline'", resources)}`,
    `img-src ${list('data:', 'blob:', resources)}`,
    `font-src ${resources || "'none'"}`,
    `connect-src ${connect}`,
  ].join('; ');
}

function escapeAttribute(value) {
  return value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

/** The app's HTML with the CSP <meta> first in its <head>, before any script can run. */
export function withCsp(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(cspFor(csp))}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return `${html.slice(0, at)}<head>${meta}</head>${html.slice(at)}`;
}

// Two palettes in the shape hosts send (McpUiStyleVariableKey), close to what a chat client shows.
const SHARED_STYLES = {
  '--font-sans': 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif',
  '--font-mono': 'ui-monospace, "DejaVu Sans Mono", monospace',
  '--font-weight-normal': '400',
  '--font-weight-medium': '500',
  '--font-weight-semibold': '600',
  '--font-weight-bold': '700',
  '--font-text-xs-size': '12px',
  '--font-text-sm-size': '14px',
  '--font-text-md-size': '16px',
  '--font-text-lg-size': '18px',
  '--font-text-sm-line-height': '20px',
  '--font-text-md-line-height': '24px',
  '--font-heading-sm-size': '16px',
  '--font-heading-md-size': '20px',
  '--border-radius-sm': '4px',
  '--border-radius-md': '8px',
  '--border-radius-lg': '12px',
  '--border-radius-full': '9999px',
  '--border-width-regular': '1px',
};
export const PALETTES = {
  light: {
    ...SHARED_STYLES,
    '--color-background-primary': '#ffffff',
    '--color-background-secondary': '#f5f4ef',
    '--color-background-tertiary': '#eceae2',
    '--color-background-inverse': '#1f1e1d',
    '--color-background-info': '#e8f0fe',
    '--color-background-danger': '#fdecea',
    '--color-background-success': '#e6f4ea',
    '--color-background-warning': '#fef7e0',
    '--color-background-disabled': '#f1f1ef',
    '--color-text-primary': '#1f1e1d',
    '--color-text-secondary': '#4d4c48',
    '--color-text-tertiary': '#6b6a64',
    '--color-text-inverse': '#ffffff',
    '--color-text-info': '#1a56c2',
    '--color-text-danger': '#b3261e',
    '--color-text-success': '#1e6b36',
    '--color-text-warning': '#7a4f00',
    '--color-text-disabled': '#8a8984',
    '--color-border-primary': '#c9c7bf',
    '--color-border-secondary': '#dedcd4',
    '--color-border-tertiary': '#ebe9e2',
    '--color-border-danger': '#e3a29c',
    '--color-ring-primary': '#2f6fdf',
  },
  dark: {
    ...SHARED_STYLES,
    '--color-background-primary': '#262624',
    '--color-background-secondary': '#30302e',
    '--color-background-tertiary': '#1f1e1d',
    '--color-background-inverse': '#faf9f5',
    '--color-background-info': '#1c2b45',
    '--color-background-danger': '#4a1f1c',
    '--color-background-success': '#1b3324',
    '--color-background-warning': '#3d3113',
    '--color-background-disabled': '#3a3a37',
    '--color-text-primary': '#f5f4ef',
    '--color-text-secondary': '#cfcdc4',
    '--color-text-tertiary': '#a8a69e',
    '--color-text-inverse': '#1f1e1d',
    '--color-text-info': '#8ab4f8',
    '--color-text-danger': '#f2a29b',
    '--color-text-success': '#8fd19e',
    '--color-text-warning': '#f0c674',
    '--color-text-disabled': '#7c7b75',
    '--color-border-primary': '#5a5953',
    '--color-border-secondary': '#46453f',
    '--color-border-tertiary': '#3a3935',
    '--color-border-danger': '#8c3b34',
    '--color-ring-primary': '#8ab4f8',
  },
};

/**
 * The host context of ui/initialize: theme, locale, palette, a 720 px wide container at most 500 px high. Without
 * `palette` the host sends no style variables, as some do, and the panel's own colours show.
 */
export function hostContextFor(theme, toolInfo, palette = true) {
  return {
    theme,
    locale: 'en-US',
    timeZone: 'Europe/Berlin',
    platform: 'web',
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { maxHeight: 500, width: 720 },
    deviceCapabilities: { touch: false, hover: true },
    ...(palette ? { styles: { variables: PALETTES[theme] } } : {}),
    ...(toolInfo ? { toolInfo } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The host page and the browser.

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title>
<style>html,body{margin:0}body{padding:20px;background:var(--host-bg,#fff)}iframe{display:block;border:0}</style>
<script type="module" src="/host.js"></script></head><body></body></html>`;

async function bundleHost(outdir) {
  const esbuild = await import('esbuild');
  const outfile = path.join(outdir, 'host.js');
  await esbuild.build({
    entryPoints: [path.join(HERE, 'host.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    minify: true,
    outfile,
    absWorkingDir: ROOT,
    logLevel: 'error',
  });
  return readFileSync(outfile);
}

/** Starts the host: bundle, loopback server, browser. Resolves { openPanel, close }. */
export async function startHost() {
  const executablePath = chromiumPath();
  assert.ok(executablePath, 'no Chromium (scripts/setup.sh test installs Debian\'s; CHROMIUM_PATH names another)');
  const tmp = mkdtempSync(path.join(tmpdir(), 'zotero-mcp-apps-'));
  const script = await bundleHost(tmp);
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url, 'http://127.0.0.1').pathname;
    if (pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(HOST_PAGE);
    } else if (pathname === '/favicon.ico') {
      res.writeHead(204).end();
    } else if (pathname === '/host.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
      res.end(script);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    protocolTimeout: 30_000,
    // As root (CI) Chromium refuses to start with its own sandbox; the pages here are the test's own.
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--force-color-profile=srgb',
      '--font-render-hinting=none',
      '--lang=en-US',
    ],
  });

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    clearTimeout(deadline);
    await browser.close().catch(() => {});
    await new Promise((resolve) => server.close(resolve));
    server.closeAllConnections?.();
    rmSync(tmp, { recursive: true, force: true });
  };
  const deadline = setTimeout(() => {
    console.error(`apps harness: still running after ${HARNESS_LIFETIME_MS / 1000} s; stopping the browser`);
    close();
  }, HARNESS_LIFETIME_MS);
  deadline.unref();

  /**
   * Opens one panel on a fresh page: `client` (a connected McpClient with the extension) is the conversation's,
   * `uri` the ui:// resource, `tool` its tools/list entry, `toolInput` and `toolResult` the call the model made.
   */
  async function openPanel({ client, uri, tool, toolInput, toolResult, theme = 'light', palette = true }) {
    const resource = await client.readResource(uri);
    assert.equal(resource.mimeType, MCP_APP_MIME, `${uri}: mimeType`);
    assert.equal(typeof resource.text, 'string', `${uri}: text`);
    const csp = resource._meta?.ui?.csp ?? {};
    const page = await browser.newPage();
    const panel = new Panel(page, { uri, theme, client, csp, resource });
    await page.setViewport({ width: 760, height: 640, deviceScaleFactor: 1 });
    await panel.listen();
    await page.goto(`${origin}/`, { waitUntil: 'load', timeout: WAIT_MS });
    await page.waitForFunction(() => typeof window.mountPanel === 'function', { timeout: WAIT_MS });
    await page.evaluate((bg) => document.body.style.setProperty('--host-bg', bg), PALETTES[theme]['--color-background-primary']);
    const hostContext = hostContextFor(theme, tool ? { id: 1, tool } : undefined, palette);
    await page.evaluate((args) => window.mountPanel(args), {
      srcdoc: withCsp(resource.text, csp),
      hostContext,
      toolInput,
      toolResult,
    });
    panel.frame = await (await page.$('iframe#panel')).contentFrame();
    await panel.waitForRecord('delivered', () => true, 'the app to initialize and take the tool input and result');
    return panel;
  }

  return { openPanel, close, origin };
}

// ---------------------------------------------------------------------------------------------------------------
// One mounted panel and what it did.

export class Panel {
  constructor(page, { uri, theme, client, csp, resource }) {
    this.page = page;
    this.uri = uri;
    this.theme = theme;
    this.client = client;
    this.csp = csp;
    this.resource = resource;
    this.frame = undefined;
    /** Every tools/call the app made through the host: { params, result } or { params, error }. */
    this.calls = [];
    /** Everything else the app did, in order: { kind, payload }. */
    this.events = [];
    /** Console errors and uncaught exceptions of the page and the panel. */
    this.errors = [];
    /** Content-Security-Policy violations in the panel (its securitypolicyviolation events and console). */
    this.violations = [];
  }

  async listen() {
    const { page } = this;
    await page.exposeFunction('__hostEvent', (kind, payload) => {
      if (kind === 'csp') this.violations.push(payload);
      else this.events.push({ kind, payload });
    });
    await page.exposeFunction('__hostCallTool', async (params) => {
      const entry = { params };
      this.calls.push(entry);
      try {
        const res = await this.client.rpc('tools/call', params);
        if (res.json?.result) entry.result = res.json.result;
        else entry.error = res.json?.error?.message ?? `HTTP ${res.status}: ${res.text.slice(0, 300)}`;
      } catch (error) {
        entry.error = String(error?.message ?? error);
      }
      return entry.error ? { error: entry.error } : { result: entry.result };
    });
    // In every document of the page, the panel's included, before its own scripts: its CSP violations.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener(
        'securitypolicyviolation',
        (event) => {
          const violation = {
            directive: event.effectiveDirective || event.violatedDirective,
            blocked: String(event.blockedURI ?? ''),
            source: String(event.sourceFile ?? ''),
            line: event.lineNumber,
          };
          (window.__cspViolations ||= []).push(violation);
          window.__hostEvent?.('csp', violation)?.catch?.(() => {});
        },
        true,
      );
    });
    page.on('console', (message) => {
      const text = message.text();
      if (/Content[- ]Security[- ]Policy/i.test(text)) this.violations.push({ console: text });
      else if (message.type() === 'error') this.errors.push(`console: ${text}`);
    });
    page.on('pageerror', (error) => this.errors.push(`uncaught: ${error?.message ?? error}`));
  }

  /** Recorded events of one kind. */
  recorded(kind) {
    return this.events.filter((event) => event.kind === kind).map((event) => event.payload);
  }

  /** Waits (bounded) until an event of `kind` matching `matches` is recorded; returns its payload. */
  async waitForRecord(kind, matches, what, timeout = WAIT_MS) {
    const started = Date.now();
    for (;;) {
      const found = this.recorded(kind).find(matches);
      if (found !== undefined) return found;
      if (Date.now() - started > timeout) {
        assert.fail(`${this.uri} (${this.theme}): waited ${timeout} ms for ${what}; recorded: ${this.describe()}`);
      }
      await sleep(50);
    }
  }

  /** Waits (bounded) until a proxied tools/call matching `matches` is answered; returns it. */
  async waitForCall(matches, what, timeout = WAIT_MS) {
    const started = Date.now();
    for (;;) {
      const found = this.calls.find((call) => matches(call) && (call.result || call.error));
      if (found) return found;
      if (Date.now() - started > timeout) {
        assert.fail(`${this.uri} (${this.theme}): waited ${timeout} ms for ${what}; recorded: ${this.describe()}`);
      }
      await sleep(50);
    }
  }

  /** Waits (bounded) until `fn` (run in the panel's document) returns something truthy; returns it. */
  async waitFor(fn, what, arg, timeout = WAIT_MS) {
    try {
      const handle = await this.frame.waitForFunction(fn, { timeout, polling: 50 }, arg);
      return await handle.jsonValue();
    } catch (error) {
      assert.fail(`${this.uri} (${this.theme}): waited ${timeout} ms for ${what} (${error.message}); recorded: ${this.describe()}`);
    }
  }

  /** Runs `fn` in the panel's document. */
  evaluate(fn, ...args) {
    return this.frame.evaluate(fn, ...args);
  }

  /** Clicks the first element matching `selector` in the panel (failing clearly when there is none). */
  async click(selector, what = selector) {
    const element = await this.waitForElement(selector, what);
    await element.click();
  }

  /** The `data-testid` of the element that has the focus in the panel's document, or null. */
  focused() {
    return this.frame.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);
  }

  /** Presses `key` on the element that has the focus in the panel (the frame takes the keyboard first). */
  async press(key) {
    const testid = await this.focused();
    assert.ok(testid, `${this.uri} (${this.theme}): nothing has the focus to press ${key} on`);
    await this.frame.focus(`[data-testid="${testid}"]`);
    await this.page.keyboard.press(key);
  }

  async waitForElement(selector, what = selector, timeout = WAIT_MS) {
    try {
      return await this.frame.waitForSelector(selector, { timeout, visible: true });
    } catch (error) {
      assert.fail(`${this.uri} (${this.theme}): no visible ${what} (${selector}) within ${timeout} ms; recorded: ${this.describe()}`);
    }
  }

  /** The iframe's current height, as the host set it from the app's size-changed. */
  async frameHeight() {
    return this.page.$eval('iframe#panel', (frame) => frame.getBoundingClientRect().height);
  }

  /** The last height the app reported, or undefined. */
  reportedHeight() {
    const sizes = this.recorded('size').filter((size) => typeof size.height === 'number');
    return sizes.at(-1)?.height;
  }

  /** Elements of the panel that scroll on their own (content past their box with overflow auto or scroll). */
  scrollers() {
    return this.frame.evaluate(() => {
      const name = (el) =>
        el.tagName.toLowerCase() + (el.id ? `#${el.id}` : '') + (el.classList.length ? `.${[...el.classList].join('.')}` : '');
      const found = [];
      for (const el of document.querySelectorAll('*')) {
        const style = getComputedStyle(el);
        const scrolls = (value) => value === 'auto' || value === 'scroll';
        const y = scrolls(style.overflowY) && el.scrollHeight > el.clientHeight + 1;
        const x = scrolls(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
        if (el !== document.documentElement && el !== document.body && (x || y)) {
          found.push(`${name(el)} (${el.scrollWidth}×${el.scrollHeight} in ${el.clientWidth}×${el.clientHeight})`);
        }
      }
      const root = document.scrollingElement ?? document.documentElement;
      if (root.scrollHeight > window.innerHeight + 1) found.push(`the document (${root.scrollHeight} px in a ${window.innerHeight} px frame)`);
      if (root.scrollWidth > window.innerWidth + 1) found.push(`the document's width (${root.scrollWidth} px in ${window.innerWidth} px)`);
      return found;
    });
  }

  /** axe-core on the panel's document: its violations, as { id, impact, help, nodes }. */
  async axe() {
    const source = readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
    // Evaluated through the debugger, not a <script>: the panel's CSP stays as the host set it.
    await this.frame.evaluate(source);
    return this.frame.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.slice(0, 5).map((node) => `${node.target.join(' ')}: ${node.failureSummary?.split('\n').slice(0, 2).join(' ')}`),
      }));
    });
  }

  /** A PNG of the panel as shown (the iframe, 720 px wide, 1x). */
  async screenshot(file) {
    const element = await this.page.$('iframe#panel');
    await element.screenshot({ path: file, type: 'png' });
  }

  /** What the panel did so far, for failure messages. */
  describe() {
    const calls = this.calls.map((call) => `${call.params?.name}${call.error ? ` → error ${call.error}` : call.result ? (call.result.isError ? ' → isError' : ' → ok') : ' → pending'}`);
    const events = this.events.map((event) => event.kind);
    const all = { calls, events, errors: this.errors.slice(0, 5), violations: this.violations.slice(0, 5) };
    return JSON.stringify(all).slice(0, 1500);
  }

  async close() {
    await this.page.close().catch(() => {});
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
