// Server routes for @shop/orders: place an order from posted cart lines and list placed orders.

function validate(body, ctx) {
  const customer = typeof body.customer === 'string' ? body.customer.trim() : '';
  if (!customer || customer.length > 80) return { error: 'customer must be a name of 1 to 80 characters' };
  if (!Array.isArray(body.items) || body.items.length === 0 || body.items.length > 50) {
    return { error: 'items must be a non-empty array of at most 50 lines' };
  }
  const items = [];
  for (const [index, line] of body.items.entries()) {
    const product = ctx.data.find('products', line?.productId);
    if (!product) return { error: `items[${index}]: unknown product "${line?.productId}"` };
    if (!Number.isInteger(line.qty) || line.qty < 1 || line.qty > 99) {
      return { error: `items[${index}]: qty must be an integer from 1 to 99` };
    }
    items.push({ productId: product.id, name: product.name, price: product.price, qty: line.qty, lineTotal: product.price * line.qty });
  }
  return { customer, items };
}

async function place(req, res, ctx) {
  const result = validate(await ctx.readJSON(req), ctx);
  if (result.error) return ctx.sendJSON(res, 400, { error: result.error });
  const total = result.items.reduce((sum, item) => sum + item.lineTotal, 0);
  const order = { id: ctx.data.nextId('ord'), ...result, total, status: 'placed', createdAt: new Date().toISOString() };
  ctx.data.list('orders').push(order);
  ctx.sendJSON(res, 201, { order });
}

export async function handle(req, res, subpath, ctx) {
  if (subpath !== '/' && subpath !== '') return false;
  if (req.method === 'GET') ctx.sendJSON(res, 200, { orders: [...ctx.data.list('orders')].reverse() });
  else if (req.method === 'POST') await place(req, res, ctx);
  else ctx.sendJSON(res, 405, { error: 'method not allowed' });
  return true;
}
