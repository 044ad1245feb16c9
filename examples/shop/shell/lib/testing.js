// Test helper for module route tests: serves one module's handle() on a real HTTP server (port 0).
import http from 'node:http';
import { createContext, invoke } from './context.js';

export async function serveModule(handle, seed = {}) {
  const ctx = createContext(seed, {});
  const server = http.createServer((req, res) => {
    const subpath = new URL(req.url, 'http://127.0.0.1').pathname;
    invoke(handle, req, res, subpath, ctx);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;

  async function request(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const res = await fetch(url + path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const close = () => new Promise((resolve) => server.close(resolve));
  return { url, ctx, request, close };
}
