// Route tests for @shop/orders, run against a real HTTP server with a fresh order list per test.
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

test('places an order priced from the catalog, ignoring client prices', async () => {
  const { status, body } = await shop.request('POST', '/', {
    customer: '  Ada  ',
    items: [{ productId: 'mug', qty: 2, price: 1 }, { productId: 'vase', qty: 1 }],
  });
  assert.equal(status, 201);
  assert.equal(body.order.id, 'ord-1');
  assert.equal(body.order.customer, 'Ada');
  assert.equal(body.order.status, 'placed');
  assert.deepEqual(body.order.items.map((i) => i.lineTotal), [3600, 2200]);
  assert.equal(body.order.total, 5800);
});

test('lists placed orders newest first', async () => {
  assert.deepEqual((await shop.request('GET', '/')).body, { orders: [] });
  await shop.request('POST', '/', { customer: 'Ada', items: [{ productId: 'mug', qty: 1 }] });
  await shop.request('POST', '/', { customer: 'Bo', items: [{ productId: 'vase', qty: 1 }] });
  const { body } = await shop.request('GET', '/');
  assert.deepEqual(body.orders.map((o) => [o.id, o.customer]), [['ord-2', 'Bo'], ['ord-1', 'Ada']]);
});

test('rejects a missing customer or empty cart with 400', async () => {
  const noName = await shop.request('POST', '/', { items: [{ productId: 'mug', qty: 1 }] });
  assert.equal(noName.status, 400);
  assert.match(noName.body.error, /customer/);
  const empty = await shop.request('POST', '/', { customer: 'Ada', items: [] });
  assert.equal(empty.status, 400);
  assert.match(empty.body.error, /items/);
});

test('rejects unknown products and bad quantities, naming the line', async () => {
  const unknown = await shop.request('POST', '/', { customer: 'Ada', items: [{ productId: 'mug', qty: 1 }, { productId: 'teapot', qty: 1 }] });
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error, /items\[1\].*teapot/);
  const badQty = await shop.request('POST', '/', { customer: 'Ada', items: [{ productId: 'mug', qty: 0 }] });
  assert.equal(badQty.status, 400);
  assert.equal((await shop.request('GET', '/')).body.orders.length, 0);
});

test('rejects non-object bodies with 400 and other methods with 405', async () => {
  assert.equal((await shop.request('POST', '/', '[1, 2]')).status, 400);
  assert.equal((await shop.request('DELETE', '/')).status, 405);
});
