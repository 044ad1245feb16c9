// Cart screen: table of cart lines with remove/clear, total, and checkout when orders is enabled.
export async function render(root, api) {
  const { h } = api;
  const body = h('div');
  root.append(h('h1', {}, 'Cart'), body);

  async function call(method, path = '') {
    const res = await fetch(`${api.base}/items${path}`, { method });
    if (!res.ok) api.notify((await res.json()).error ?? 'Request failed', 'error');
    await load();
  }

  function row(item) {
    return h('tr', {},
      h('td', {}, item.name),
      h('td', { class: 'num' }, String(item.qty)),
      h('td', { class: 'num' }, api.money(item.lineTotal)),
      h('td', { class: 'num' }, h('button', { class: 'danger', onclick: () => call('DELETE', `/${item.productId}`) }, 'Remove')),
    );
  }

  async function load() {
    const cart = await fetch(`${api.base}/items`).then((res) => res.json());
    if (!cart.items.length) {
      const browse = api.has('catalog') && h('button', { onclick: () => api.go('catalog') }, 'Browse the catalog');
      return body.replaceChildren(h('p', { class: 'empty' }, 'Your cart is empty.'), browse || '');
    }
    body.replaceChildren(
      h('table', {},
        h('thead', {}, h('tr', {}, h('th', {}, 'Product'), h('th', { class: 'num' }, 'Qty'), h('th', { class: 'num' }, 'Total'), h('th'))),
        h('tbody', {}, cart.items.map(row)),
      ),
      h('div', { class: 'total' },
        h('span', {}, `${cart.count} item(s) · ${api.money(cart.total)}`),
        h('button', { onclick: () => call('DELETE') }, 'Clear cart'),
        api.has('orders') && h('button', { class: 'primary', onclick: () => api.go('orders') }, 'Checkout'),
      ),
    );
  }

  await load();
}
