// Route tests for @shop/catalog, run against a real HTTP server with a small product seed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { serveModule } from '../../../shell/lib/testing.js';
import { handle } from '../src/server/routes.js';

const products = [
  { id: 'mug', name: 'Stoneware Mug', category: 'kitchen', price: 1800, description: 'Glazed mug.' },
  { id: 'vase', name: 'Bud Vase', category: 'home', price: 2200, description: 'Slim vase.' },
  { id: 'bowl', name: 'Serving Bowl', category: 'kitchen', price: 3400, description: 'Wide bowl.' },
];
let shop;
before(async () => (shop = await serveModule(handle, { products })));
after(() => shop.close());

test('lists every product in fixture order', async () => {
  const { status, body } = await shop.request('GET', '/products');
  assert.equal(status, 200);
  assert.equal(body.total, 3);
  assert.deepEqual(body.products.map((p) => p.id), ['mug', 'vase', 'bowl']);
});

test('searches name, description and category case-insensitively', async () => {
  const { body } = await shop.request('GET', '/products?q=KITCHEN');
  assert.deepEqual(body.products.map((p) => p.id), ['mug', 'bowl']);
  const { body: byName } = await shop.request('GET', '/products?q=vase');
  assert.deepEqual(byName.products.map((p) => p.id), ['vase']);
});

test('filters by maxPrice and rejects invalid values with 400', async () => {
  const { body } = await shop.request('GET', '/products?maxPrice=2200');
  assert.deepEqual(body.products.map((p) => p.id), ['mug', 'vase']);
  for (const bad of ['cheap', '-1', '12.5']) {
    const res = await shop.request('GET', `/products?maxPrice=${bad}`);
    assert.equal(res.status, 400, `maxPrice=${bad}`);
    assert.match(res.body.error, /maxPrice/);
  }
});

test('rejects overly long search text with 400', async () => {
  const { status } = await shop.request('GET', `/products?q=${'x'.repeat(101)}`);
  assert.equal(status, 400);
});

test('returns one product by id and 404 for unknown ids', async () => {
  const found = await shop.request('GET', '/products/vase');
  assert.equal(found.status, 200);
  assert.equal(found.body.product.name, 'Bud Vase');
  const missing = await shop.request('GET', '/products/nope');
  assert.equal(missing.status, 404);
});

test('is read-only: POST answers 405, unknown paths 404', async () => {
  assert.equal((await shop.request('POST', '/products', { name: 'x' })).status, 405);
  assert.equal((await shop.request('GET', '/nothing')).status, 404);
});
