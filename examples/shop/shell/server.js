// Shop application shell: serves the page and assets, and mounts enabled modules' APIs, screens and nav entries.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createContext, invoke, sendJSON } from './lib/context.js';
import { enabledModules } from './lib/modules.js';

const shellDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(shellDir);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png' };

// Minimal .env reader (KEY=value lines); real environment variables win.
function loadDotEnv(file) {
  if (!fs.existsSync(file)) return;
  for (const line of fs.readFileSync(file, 'utf8').split(/\r?\n/)) {
    const match = line.match(/^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/);
    if (match && process.env[match[1]] === undefined) process.env[match[1]] = match[2].replace(/^(['"])(.*)\1$/, '$2');
  }
}

// Seeds the in-memory store with every <name>.json file in the data directory.
function loadFixtures(dir) {
  const seed = {};
  if (!fs.existsSync(dir)) return seed;
  for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    seed[path.basename(file, '.json')] = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  }
  return seed;
}

function serveFile(res, baseDir, relative) {
  const file = path.resolve(baseDir, '.' + path.posix.normalize('/' + relative));
  if (!file.startsWith(baseDir + path.sep) || !fs.statSync(file, { throwIfNoEntry: false })?.isFile()) {
    return sendJSON(res, 404, { error: 'not found' });
  }
  res.writeHead(200, { 'content-type': `${TYPES[path.extname(file)] ?? 'application/octet-stream'}; charset=utf-8`, 'cache-control': 'no-store' });
  fs.createReadStream(file).pipe(res);
}

loadDotEnv(path.join(root, '.env'));
const { values: args } = parseArgs({ options: { port: { type: 'string' }, data: { type: 'string' } } });
const port = Number(args.port ?? process.env.PORT ?? 4310);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`invalid port: ${args.port ?? process.env.PORT}`);
  process.exit(2);
}
const dataDir = path.resolve(root, args.data ?? process.env.SHOP_DATA ?? 'fixtures');
const ctx = createContext(loadFixtures(dataDir));
// SHOP_LOG_REQUESTS=1 prints "<METHOD> <url>" for every request (Kiln's bridge test reads it).
const logRequests = process.env.SHOP_LOG_REQUESTS === '1';
// Re-read on each request when enabled.json or a module changed, so modules show up without touching the shell.
const currentModules = enabledModules(root);
await currentModules();

async function route(req, res) {
  const { pathname } = new URL(req.url, 'http://127.0.0.1');
  const [, first = '', second = '', ...rest] = pathname.split('/');
  if (pathname === '/health' && (req.method === 'GET' || req.method === 'HEAD')) return sendJSON(res, 200, { ok: true });
  const modules = await currentModules();
  const byDirectory = new Map(modules.map((mod) => [mod.directory, mod]));

  if (first === 'api') {
    // The shop has no auth API: /api/auth/* is always 404, whatever modules are enabled.
    if (second === 'auth') return sendJSON(res, 404, { error: 'not found' });
    const mod = byDirectory.get(second);
    if (mod?.loadError) return sendJSON(res, 500, { error: `module "${second}" failed to load: ${mod.loadError.message}` });
    if (!mod?.handle) return sendJSON(res, 404, { error: `no API for module "${second}"` });
    return invoke(mod.handle, req, res, '/' + rest.join('/'), ctx);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJSON(res, 405, { error: 'method not allowed' });
  if (pathname === '/modules.json') {
    const list = modules.map(({ id, directory, title, route }) => ({ id, directory, title, route }));
    return sendJSON(res, 200, { shop: { name: ctx.shopName }, modules: list });
  }
  if (first === 'modules' && byDirectory.has(second)) return serveFile(res, byDirectory.get(second).clientDir, rest.join('/'));
  if (pathname === '/' || pathname === '/index.html' || modules.some((mod) => mod.route === pathname)) return serveFile(res, shellDir, 'index.html');
  if (!second && /^[a-z0-9-]+\.(js|css)$/.test(first) && first !== 'server.js') return serveFile(res, shellDir, first);
  return sendJSON(res, 404, { error: 'not found' });
}

const server = http.createServer((req, res) => {
  if (logRequests) console.log(`${req.method} ${req.url}`);
  route(req, res).catch((error) => {
    console.error(error);
    if (!res.headersSent) sendJSON(res, 500, { error: 'internal error' });
    else res.end();
  });
});

server.on('error', (error) => {
  console.error(`cannot listen on 127.0.0.1:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
