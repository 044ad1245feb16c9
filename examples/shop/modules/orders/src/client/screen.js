// Orders screen: checkout panel that places an order from the cart, plus the list of placed orders.
export async function render(root, api) {
  const { h } = api;
  const checkout = h('section');
  const list = h('section');
  root.append(h('h1', {}, 'Orders'), checkout, h('h2', {}, 'Placed orders'), list);

  async function loadCheckout() {
    if (!api.has('cart')) return checkout.replaceChildren(h('p', { class: 'empty' }, 'Enable the cart module to check out.'));
    const cart = await fetch('/api/cart/items').then((res) => res.json());
    if (!cart.items.length) return checkout.replaceChildren(h('p', { class: 'empty' }, 'Your cart is empty — nothing to check out.'));
    const name = h('input', { placeholder: 'Your name', 'aria-label': 'Customer name', maxlength: '80' });
    const place = h('button', { class: 'primary' }, `Place order · ${api.money(cart.total)}`);
    place.addEventListener('click', async () => {
      place.disabled = true;
      const items = cart.items.map(({ productId, qty }) => ({ productId, qty }));
      const res = await fetch(api.base, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer: name.value, items }),
      });
      const body = await res.json();
      place.disabled = false;
      if (!res.ok) return api.notify(body.error, 'error');
      await fetch('/api/cart/items', { method: 'DELETE' });
      api.notify(`Order ${body.order.id} placed`);
      await Promise.all([loadCheckout(), loadOrders()]);
    });
    checkout.replaceChildren(
      h('h2', {}, 'Checkout'),
      h('p', {}, cart.items.map((item) => `${item.qty} × ${item.name}`).join(', ')),
      h('div', { class: 'toolbar' }, name, place),
    );
  }

  async function loadOrders() {
    const { orders } = await fetch(api.base).then((res) => res.json());
    if (!orders.length) return list.replaceChildren(h('p', { class: 'empty' }, 'No orders yet.'));
    list.replaceChildren(h('table', {},
      h('thead', {}, h('tr', {}, ...['Order', 'Customer', 'Items', 'Placed'].map((t) => h('th', {}, t)), h('th', { class: 'num' }, 'Total'))),
      h('tbody', {}, orders.map((order) => h('tr', {},
        h('td', {}, order.id),
        h('td', {}, order.customer),
        h('td', {}, order.items.map((item) => `${item.qty} × ${item.name}`).join(', ')),
        h('td', {}, new Date(order.createdAt).toLocaleString()),
        h('td', { class: 'num' }, api.money(order.total)),
      ))),
    ));
  }

  await Promise.all([loadCheckout(), loadOrders()]);
}
