// Server routes for @shop/catalog: list/search products and look one up by id.

function search(products, params) {
  const q = (params.get('q') ?? '').trim().toLowerCase();
  if (q.length > 100) return { error: 'q must be at most 100 characters' };
  const rawMax = params.get('maxPrice') ?? '';
  if (rawMax !== '' && !/^\d+$/.test(rawMax)) return { error: 'maxPrice must be a non-negative integer (cents)' };
  const maxPrice = rawMax === '' ? Infinity : Number(rawMax);
  const matches = products.filter((product) =>
    product.price <= maxPrice &&
    (!q || [product.name, product.description, product.category].some((text) => text?.toLowerCase().includes(q))),
  );
  return { products: matches, total: matches.length };
}

export async function handle(req, res, subpath, ctx) {
  const products = ctx.data.list('products');
  const byId = subpath.match(/^\/products\/([A-Za-z0-9_-]+)$/);
  if (subpath !== '/products' && !byId) return false;
  if (req.method !== 'GET') {
    ctx.sendJSON(res, 405, { error: 'method not allowed' });
    return true;
  }
  if (byId) {
    const product = ctx.data.find('products', byId[1]);
    if (product) ctx.sendJSON(res, 200, { product });
    else ctx.sendJSON(res, 404, { error: `unknown product "${byId[1]}"` });
    return true;
  }
  const result = search(products, new URL(req.url, 'http://localhost').searchParams);
  ctx.sendJSON(res, result.error ? 400 : 200, result);
  return true;
}
