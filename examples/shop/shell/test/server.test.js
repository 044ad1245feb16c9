// Tests for the shop shell (shell/server.js) in a scratch copy of the shop: module composition, API 404s, request log.
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const shopDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let copy;
let shell;

// Starts shell/server.js from `root` on a free port; resolves once it prints "listening on".
function start(root, env = {}) {
  const child = spawn(process.execPath, ['shell/server.js', '--port', '0'], {
    cwd: root,
    env: { ...process.env, SHOP_NAME: 'Test Shop', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = [];
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop();
      for (const line of parts) {
        lines.push(line);
        const ready = line.match(/^listening on (http:\/\/127\.0\.0\.1:\d+)$/);
        if (ready) resolve({ url: ready[1], child, lines, stop: () => stop(child) });
      }
    });
    child.on('exit', (code) => reject(new Error(`shell exited with ${code} before listening: ${stderr}`)));
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

async function get(url, init) {
  const res = await fetch(url, init);
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, type, body: type.startsWith('application/json') ? await res.json() : await res.text() };
}

before(async () => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'shop-shell-'));
  for (const part of ['shell', 'modules', 'fixtures', 'scripts', 'package.json']) {
    fs.cpSync(path.join(shopDir, part), path.join(copy, part), { recursive: true, filter: (src) => !src.includes('node_modules') });
  }
  shell = await start(copy, { SHOP_LOG_REQUESTS: '1' });
});

after(async () => {
  await shell?.stop();
  fs.rmSync(copy, { recursive: true, force: true });
});

// The enabled module ids of the scratch copy.
const enabledIds = () => JSON.parse(fs.readFileSync(path.join(copy, 'shell', 'enabled.json'), 'utf8'));

test('composes a nav entry and a screen for every enabled module', async () => {
  const { status, body } = await get(`${shell.url}/modules.json`);
  assert.equal(status, 200);
  assert.equal(body.shop.name, 'Test Shop');
  assert.deepEqual(body.modules.map((mod) => mod.id), enabledIds());
  assert.ok(body.modules.length >= 3);
  for (const mod of body.modules) {
    const page = await get(`${shell.url}/?module=${mod.directory}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /id="brand"/);
    assert.match(page.body, /id="screen"/);
    assert.equal((await get(shell.url + mod.route)).status, 200, mod.route);
    const screen = await get(`${shell.url}/modules/${mod.directory}/screen.js`);
    assert.equal(screen.status, 200);
    assert.match(screen.body, /h\('h1'/, `${mod.directory} renders an <h1>`);
  }
  assert.equal((await get(`${shell.url}/health`)).status, 200);
});

test('answers 404 JSON for unknown API paths and never serves /api/auth', async () => {
  for (const [method, url] of [['GET', '/api/nope/things'], ['GET', '/api/catalog/nope'], ['GET', '/api/auth/session'], ['POST', '/api/auth/login'], ['GET', '/api']]) {
    const res = await get(shell.url + url, { method });
    assert.equal(res.status, 404, `${method} ${url}`);
    assert.match(res.type, /^application\/json/, `${method} ${url}`);
  }
  assert.equal((await get(`${shell.url}/api/catalog/products`)).status, 200);
});

test('a disabled module has no API, nav entry or screen, without a restart', async () => {
  const enabledFile = path.join(copy, 'shell', 'enabled.json');
  const original = fs.readFileSync(enabledFile, 'utf8');
  const rest = enabledIds().filter((id) => id !== '@shop/orders');
  assert.equal((await get(`${shell.url}/api/orders/`)).status, 200);
  try {
    fs.writeFileSync(enabledFile, JSON.stringify(rest, null, 2) + '\n');
    assert.equal((await get(`${shell.url}/api/orders/`)).status, 404);
    assert.equal((await get(`${shell.url}/modules/orders/screen.js`)).status, 404);
    const { body } = await get(`${shell.url}/modules.json`);
    assert.deepEqual(body.modules.map((mod) => mod.id), rest);
  } finally {
    fs.writeFileSync(enabledFile, original);
  }
  assert.equal((await get(`${shell.url}/api/orders/`)).status, 200);
});

test('a new module from the scaffold shows up once enabled, without touching the shell', async () => {
  execFileSync(process.execPath, ['scripts/new-module.js', '@shop/shell-probe', 'modules/shell-probe'], { cwd: copy });
  assert.equal((await get(`${shell.url}/api/shell-probe/status`)).status, 404, 'not enabled yet');
  execFileSync(process.execPath, ['scripts/enable-module.js', '@shop/shell-probe'], { cwd: copy });
  const { body } = await get(`${shell.url}/modules.json`);
  assert.deepEqual(body.modules.at(-1), { id: '@shop/shell-probe', directory: 'shell-probe', title: 'Shell Probe', route: '/shell-probe' });
  assert.deepEqual((await get(`${shell.url}/api/shell-probe/status`)).body, { ok: true, module: '@shop/shell-probe' });
  assert.equal((await get(`${shell.url}/?module=shell-probe`)).status, 200);
  assert.match((await get(`${shell.url}/modules/shell-probe/screen.js`)).body, /h\('h1', \{\}, 'Shell Probe'\)/);
});

test('an edited module route is served afresh on the next request', async () => {
  const routes = path.join(copy, 'modules', 'shell-probe', 'src', 'server', 'routes.js');
  fs.writeFileSync(routes, fs.readFileSync(routes, 'utf8').replace("ok: true, module", "ok: 'edited', module"));
  const later = new Date(Date.now() + 2000);
  fs.utimesSync(routes, later, later);
  assert.equal((await get(`${shell.url}/api/shell-probe/status`)).body.ok, 'edited');
});

test('SHOP_LOG_REQUESTS=1 prints one "<METHOD> <url>" line per request', async () => {
  await get(`${shell.url}/api/catalog/products?q=mug`);
  await get(`${shell.url}/api/auth/login`, { method: 'POST' });
  // The lines may reach this process a moment after the responses.
  for (let i = 0; i < 50 && !shell.lines.includes('POST /api/auth/login'); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(shell.lines.includes('GET /api/catalog/products?q=mug'), shell.lines.join('\n'));
  assert.ok(shell.lines.includes('POST /api/auth/login'), shell.lines.join('\n'));
});

test('logs no requests without SHOP_LOG_REQUESTS and exits 0 on SIGTERM', async () => {
  const quiet = await start(copy, { SHOP_LOG_REQUESTS: '' });
  await get(`${quiet.url}/health`);
  assert.equal(await quiet.stop(), 0);
  assert.deepEqual(quiet.lines.filter((line) => line.startsWith('GET ')), []);
});
