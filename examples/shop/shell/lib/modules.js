// Module discovery for the shell: reads modules/*/package.json and shell/enabled.json, and keeps the list current.
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
// A module whose routes fail to load is still mounted (nav entry and screen); its API answers 500 with the error.
export async function loadEnabledModules(root) {
  const enabled = await readJSONFile(path.join(root, 'shell', 'enabled.json')).catch(() => []);
  const byId = new Map((await discoverModules(root)).map((mod) => [mod.id, mod]));
  const mounted = [];
  for (const id of Array.isArray(enabled) ? enabled : []) {
    const mod = byId.get(id);
    if (!mod) {
      console.warn(`enabled module ${id} was not found under modules/`);
      continue;
    }
    const routesFile = path.join(mod.dir, 'src', 'server', 'routes.js');
    const stat = await fs.stat(routesFile).catch(() => null);
    let handle;
    let loadError;
    if (stat?.isFile()) {
      try {
        // The mtime in the URL makes an edited routes.js load afresh (files it imports stay cached until a restart).
        ({ handle } = await import(`${pathToFileURL(routesFile).href}?v=${stat.mtimeMs}`));
      } catch (error) {
        loadError = error;
        console.error(`modules/${mod.directory}/src/server/routes.js failed to load: ${error.stack ?? error.message}`);
      }
    }
    mounted.push({ ...mod, handle, loadError, clientDir: path.join(mod.dir, 'src', 'client') });
  }
  return mounted;
}

// What the enabled-module list depends on: enabled.json, the module directories, their package.json and routes.js.
async function signature(root) {
  const stamp = async (file) => {
    const stat = await fs.stat(file).catch(() => null);
    return stat ? `${stat.mtimeMs}:${stat.size}` : '-';
  };
  const parts = [await stamp(path.join(root, 'shell', 'enabled.json'))];
  const modulesDir = path.join(root, 'modules');
  const entries = await fs.readdir(modulesDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = path.join(modulesDir, entry.name);
    parts.push(entry.name, await stamp(path.join(dir, 'package.json')), await stamp(path.join(dir, 'src', 'server', 'routes.js')));
  }
  return parts.join('|');
}

// Returns current(): the enabled modules, reloaded whenever enabled.json or a module changes on disk,
// so a module that is added, enabled, disabled or edited shows up on the next request without a restart.
export function enabledModules(root) {
  let seen;
  let loading;
  return async function current() {
    const now = await signature(root);
    if (now !== seen || !loading) {
      seen = now;
      loading = loadEnabledModules(root).catch((error) => {
        seen = undefined;
        throw error;
      });
    }
    return loading;
  };
}
