// Catalog screen: searchable product grid with "Add to cart" when the cart module is enabled.
export async function render(root, api) {
  const { h } = api;
  const search = h('input', { type: 'search', placeholder: 'Search products…', 'aria-label': 'Search products' });
  const grid = h('div', { class: 'grid' });
  root.append(h('h1', {}, 'Catalog'), h('div', { class: 'toolbar' }, search), grid);

  async function addToCart(product) {
    const res = await fetch('/api/cart/items', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ productId: product.id, qty: 1 }),
    });
    if (res.ok) api.notify(`Added ${product.name} to the cart`);
    else api.notify((await res.json()).error ?? 'Could not add to cart', 'error');
  }

  function card(product) {
    return h('article', { class: 'card' },
      h('strong', {}, product.name),
      h('span', { class: 'meta' }, product.category),
      h('p', {}, product.description),
      h('span', { class: 'price' }, api.money(product.price)),
      api.has('cart') && h('button', { class: 'primary', onclick: () => addToCart(product) }, 'Add to cart'),
    );
  }

  async function load() {
    const res = await fetch(`${api.base}/products?q=${encodeURIComponent(search.value)}`);
    const body = await res.json();
    if (!res.ok) return grid.replaceChildren(h('p', { class: 'error' }, body.error));
    grid.replaceChildren(...(body.products.length ? body.products.map(card) : [h('p', { class: 'empty' }, 'No products match.')]));
  }

  let timer;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, 200);
  });
  await load();
}
