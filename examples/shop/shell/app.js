// Browser entry for the shop shell: builds the module nav and mounts the selected module screen.
const nav = document.getElementById('nav');
const screen = document.getElementById('screen');
const toast = document.getElementById('toast');
const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

const { shop, modules } = await fetch('/modules.json').then((res) => res.json());
document.getElementById('brand').textContent = shop.name;

// Tiny DOM builder shared with screens: h('button', { class: 'primary', onclick }, 'Label').
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  node.append(...children.flat().filter((child) => child != null && child !== false));
  return node;
}

let toastTimer;
function notify(message, kind = 'info') {
  toast.textContent = message;
  toast.className = `toast ${kind}`;
  toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (toast.hidden = true), 2500);
}

function selected() {
  const requested = new URLSearchParams(location.search).get('module');
  if (requested) return modules.find((mod) => mod.directory === requested) ?? { missing: requested };
  return modules.find((mod) => mod.route === location.pathname) ?? modules[0];
}

async function show(mod) {
  for (const link of nav.children) link.classList.toggle('active', link.dataset.module === mod?.directory);
  screen.replaceChildren();
  // Which module the screen shows (tests wait for `#screen[data-module="<directory>"] h1`).
  if (mod?.directory) screen.dataset.module = mod.directory;
  else delete screen.dataset.module;
  if (!mod) return screen.append(h('p', { class: 'empty' }, 'No modules are enabled.'));
  if (mod.missing) return screen.append(h('p', { class: 'error' }, `Module "${mod.missing}" is not enabled.`));
  document.title = `${mod.title} · ${shop.name}`;
  const api = {
    shop, module: mod, modules, h, notify,
    base: `/api/${mod.directory}`,
    has: (directory) => modules.some((other) => other.directory === directory),
    go: (directory) => navigate(`/?module=${encodeURIComponent(directory)}`),
    money: (cents) => money.format(cents / 100),
  };
  try {
    const { render } = await import(`/modules/${mod.directory}/screen.js`);
    await render(screen, api);
  } catch (error) {
    console.error(error);
    screen.replaceChildren(h('p', { class: 'error' }, `Could not load ${mod.title}: ${error.message}`));
  }
}

function navigate(url) {
  history.pushState(null, '', url);
  show(selected());
}

for (const mod of modules) {
  const link = h('a', { href: `/?module=${mod.directory}`, 'data-module': mod.directory }, mod.title);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    navigate(link.getAttribute('href'));
  });
  nav.append(link);
}
window.addEventListener('popstate', () => show(selected()));
show(selected());
