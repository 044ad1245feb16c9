// Server routes for @shop/cart: in-memory cart lines (add, list, remove one, clear).
const MAX_QTY = 99;

function view(ctx) {
  const items = ctx.data.list('cart').map(({ productId, qty }) => {
    const product = ctx.data.find('products', productId);
    const price = product?.price ?? 0;
    return { productId, name: product?.name ?? productId, price, qty, lineTotal: price * qty };
  });
  const count = items.reduce((sum, item) => sum + item.qty, 0);
  const total = items.reduce((sum, item) => sum + item.lineTotal, 0);
  return { items, count, total };
}

async function add(req, res, ctx) {
  const { productId, qty = 1 } = await ctx.readJSON(req);
  if (typeof productId !== 'string' || !productId) return ctx.sendJSON(res, 400, { error: 'productId is required' });
  if (!Number.isInteger(qty) || qty < 1 || qty > MAX_QTY) {
    return ctx.sendJSON(res, 400, { error: `qty must be an integer from 1 to ${MAX_QTY}` });
  }
  if (!ctx.data.find('products', productId)) return ctx.sendJSON(res, 404, { error: `unknown product "${productId}"` });
  const cart = ctx.data.list('cart');
  const line = cart.find((item) => item.productId === productId);
  if ((line?.qty ?? 0) + qty > MAX_QTY) return ctx.sendJSON(res, 400, { error: `a cart line holds at most ${MAX_QTY}` });
  if (line) line.qty += qty;
  else cart.push({ productId, qty });
  ctx.sendJSON(res, 201, { item: line ?? cart.at(-1) });
}

function remove(res, ctx, productId) {
  const cart = ctx.data.list('cart');
  const index = cart.findIndex((item) => item.productId === productId);
  if (index === -1) return ctx.sendJSON(res, 404, { error: `"${productId}" is not in the cart` });
  cart.splice(index, 1);
  ctx.sendJSON(res, 204);
}

export async function handle(req, res, subpath, ctx) {
  const one = subpath.match(/^\/items\/([A-Za-z0-9_-]+)$/);
  if (subpath !== '/items' && !one) return false;
  if (one && req.method === 'DELETE') remove(res, ctx, one[1]);
  else if (one) ctx.sendJSON(res, 405, { error: 'method not allowed' });
  else if (req.method === 'GET') ctx.sendJSON(res, 200, view(ctx));
  else if (req.method === 'POST') await add(req, res, ctx);
  else if (req.method === 'DELETE') {
    ctx.data.list('cart').length = 0;
    ctx.sendJSON(res, 204);
  } else ctx.sendJSON(res, 405, { error: 'method not allowed' });
  return true;
}
