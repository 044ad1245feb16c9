// Route tests for @shop/cart, run against a real HTTP server with a fresh cart per test.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { serveModule } from '../../../shell/lib/testing.js';
import { handle } from '../src/server/routes.js';

const products = [
  { id: 'mug', name: 'Stoneware Mug', price: 1800 },
  { id: 'vase', name: 'Bud Vase', price: 2200 },
];
let shop;
beforeEach(async () => (shop = await serveModule(handle, { products })));
afterEach(() => shop.close());

test('starts empty', async () => {
  const { status, body } = await shop.request('GET', '/items');
  assert.equal(status, 200);
  assert.deepEqual(body, { items: [], count: 0, total: 0 });
});

test('adds items, merges repeated products and prices lines from the catalog', async () => {
  assert.equal((await shop.request('POST', '/items', { productId: 'mug' })).status, 201);
  await shop.request('POST', '/items', { productId: 'mug', qty: 2 });
  await shop.request('POST', '/items', { productId: 'vase', qty: 1, price: 1 });
  const { body } = await shop.request('GET', '/items');
  assert.deepEqual(body.items.map((i) => [i.productId, i.qty, i.lineTotal]), [['mug', 3, 5400], ['vase', 1, 2200]]);
  assert.equal(body.count, 4);
  assert.equal(body.total, 7600);
});

test('rejects invalid input with 400 and unknown products with 404', async () => {
  for (const bad of [{}, { productId: 42 }, { productId: 'mug', qty: 0 }, { productId: 'mug', qty: 1.5 }, { productId: 'mug', qty: 100 }]) {
    assert.equal((await shop.request('POST', '/items', bad)).status, 400, JSON.stringify(bad));
  }
  assert.equal((await shop.request('POST', '/items', '{not json')).status, 400);
  assert.equal((await shop.request('POST', '/items', { productId: 'teapot' })).status, 404);
  assert.equal((await shop.request('GET', '/items')).body.items.length, 0);
});

test('caps a line at 99', async () => {
  await shop.request('POST', '/items', { productId: 'mug', qty: 99 });
  assert.equal((await shop.request('POST', '/items', { productId: 'mug' })).status, 400);
});

test('removes one line, 404s for absent lines, and clears the cart', async () => {
  await shop.request('POST', '/items', { productId: 'mug' });
  await shop.request('POST', '/items', { productId: 'vase' });
  assert.equal((await shop.request('DELETE', '/items/mug')).status, 204);
  assert.equal((await shop.request('DELETE', '/items/mug')).status, 404);
  assert.deepEqual((await shop.request('GET', '/items')).body.items.map((i) => i.productId), ['vase']);
  assert.equal((await shop.request('DELETE', '/items')).status, 204);
  assert.equal((await shop.request('GET', '/items')).body.count, 0);
});
