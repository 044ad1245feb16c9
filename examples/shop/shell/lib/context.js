// Shared request context handed to module routes: in-memory data store plus JSON helpers.

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// In-memory collections shared by all modules of one process (seeded from fixtures).
export function createStore(seed = {}) {
  const collections = new Map(Object.entries(seed).map(([name, items]) => [name, structuredClone(items)]));
  const counters = new Map();
  return {
    list(name) {
      if (!collections.has(name)) collections.set(name, []);
      return collections.get(name);
    },
    find(name, id) {
      return this.list(name).find((item) => item.id === id);
    },
    nextId(prefix) {
      const next = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, next);
      return `${prefix}-${next}`;
    },
  };
}

// Reads a JSON object body; malformed or non-object bodies throw HttpError(400).
export async function readJSON(req, limit = 1_000_000) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, 'request body too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'request body must be a JSON object');
  return body;
}

export function sendJSON(res, status, body) {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

export function createContext(seed = {}, env = process.env) {
  return {
    data: createStore(seed),
    shopName: env.SHOP_NAME || 'Kiln Shop',
    readJSON,
    sendJSON,
    HttpError,
  };
}

// Calls a module's handle(); unhandled requests become 404 and thrown errors become JSON errors.
export async function invoke(handle, req, res, subpath, ctx) {
  try {
    const handled = await handle(req, res, subpath, ctx);
    if (!handled && !res.headersSent) sendJSON(res, 404, { error: 'not found' });
  } catch (error) {
    const status = error instanceof HttpError ? error.status : 500;
    if (status === 500) console.error(error);
    if (!res.headersSent) sendJSON(res, status, { error: status === 500 ? 'internal error' : error.message });
    else res.end();
  }
}
