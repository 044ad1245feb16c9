// Module discovery for the shell: reads modules/*/package.json and shell/enabled.json.
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

async function readJSONFile(file) {
  return JSON.parse(await fs.readFile(file, 'utf8'));
}

export async function discoverModules(root) {
  const modulesDir = path.join(root, 'modules');
  const entries = await fs.readdir(modulesDir, { withFileTypes: true }).catch(() => []);
  const found = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(modulesDir, entry.name);
    try {
      const pkg = await readJSONFile(path.join(dir, 'package.json'));
      const shop = pkg.shop ?? {};
      found.push({
        id: pkg.name,
        directory: entry.name,
        title: shop.title ?? entry.name,
        route: shop.route ?? `/${entry.name}`,
        dir,
      });
    } catch (error) {
      console.warn(`skipping modules/${entry.name}: ${error.message}`);
    }
  }
  return found;
}

// Returns the enabled modules in enabled.json order, with their route handlers imported.
export async function loadEnabledModules(root) {
  const enabled = await readJSONFile(path.join(root, 'shell', 'enabled.json')).catch(() => []);
  const byId = new Map((await discoverModules(root)).map((mod) => [mod.id, mod]));
  const mounted = [];
  for (const id of enabled) {
    const mod = byId.get(id);
    if (!mod) {
      console.warn(`enabled module ${id} was not found under modules/`);
      continue;
    }
    const routesFile = path.join(mod.dir, 'src', 'server', 'routes.js');
    const hasRoutes = await fs.access(routesFile).then(() => true, () => false);
    const routes = hasRoutes ? await import(pathToFileURL(routesFile).href) : {};
    mounted.push({ ...mod, handle: routes.handle, clientDir: path.join(mod.dir, 'src', 'client') });
  }
  return mounted;
}
