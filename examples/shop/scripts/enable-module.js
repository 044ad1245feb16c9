// Enables a module in the shell: `node scripts/enable-module.js <id>` appends it to shell/enabled.json (idempotent).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const enabledFile = path.join(root, 'shell', 'enabled.json');
const id = process.argv[2];

if (!id || !/^@shop\/[a-z][a-z0-9-]*$/.test(id)) {
  console.error('usage: node scripts/enable-module.js <@shop/name>');
  process.exit(1);
}
const known = fs.readdirSync(path.join(root, 'modules')).some((entry) => {
  const pkgFile = path.join(root, 'modules', entry, 'package.json');
  return fs.existsSync(pkgFile) && JSON.parse(fs.readFileSync(pkgFile, 'utf8')).name === id;
});
if (!known) {
  console.error(`enable-module: no module named ${id} under modules/`);
  process.exit(1);
}

const enabled = fs.existsSync(enabledFile) ? JSON.parse(fs.readFileSync(enabledFile, 'utf8')) : [];
if (enabled.includes(id)) {
  console.log(`${id} is already enabled`);
} else {
  fs.writeFileSync(enabledFile, JSON.stringify([...enabled, id], null, 2) + '\n');
  console.log(`enabled ${id}`);
}
