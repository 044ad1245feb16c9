// Scaffolds a new shop module: `node scripts/new-module.js <id> <directory>` (e.g. @shop/reviews modules/reviews).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [id, directory] = process.argv.slice(2);

function fail(message) {
  console.error(`new-module: ${message}`);
  process.exit(1);
}

if (!id || !directory) fail('usage: node scripts/new-module.js <@shop/name> <directory>');
if (!/^@shop\/[a-z][a-z0-9-]*$/.test(id)) fail(`invalid module id "${id}" (expected @shop/<lowercase-name>)`);
const dir = path.resolve(root, directory);
if (fs.existsSync(dir)) fail(`${directory} already exists`);
const modulesDir = path.join(root, 'modules');
for (const entry of fs.existsSync(modulesDir) ? fs.readdirSync(modulesDir) : []) {
  const pkgFile = path.join(modulesDir, entry, 'package.json');
  if (fs.existsSync(pkgFile) && JSON.parse(fs.readFileSync(pkgFile, 'utf8')).name === id) fail(`${id} already exists in modules/${entry}`);
}

const slug = id.slice('@shop/'.length);
const name = path.basename(dir);
const title = slug.split('-').map((word) => word[0].toUpperCase() + word.slice(1)).join(' ');
const testing = path.relative(path.join(dir, 'test'), path.join(root, 'shell', 'lib', 'testing.js')).split(path.sep).join('/');

const files = {
  'package.json': JSON.stringify({
    name: id, version: '0.1.0', private: true, type: 'module',
    scripts: { test: 'node --test' },
    shop: { title, route: `/${name}` },
  }, null, 2) + '\n',
  'SPEC.md': `---\nstatus: draft\n---\n# ${title}\n\n## Purpose\nTODO: what ${title} is for.\n\n## Screens\n- **${title}** (\`/?module=${name}\`): TODO.\n\n## API\n- \`GET /api/${name}/status\` → \`200 { ok, module }\`.\n\n## Rules\n- TODO.\n`,
  'src/client/screen.js': `// ${title} screen (${id}): renders into the shell's root element.\nexport async function render(root, api) {\n  const status = await fetch(\`\${api.base}/status\`).then((res) => res.json());\n  root.append(api.h('h1', {}, '${title}'), api.h('p', { class: 'empty' }, \`\${status.module} is ready.\`));\n}\n`,
  'src/server/routes.js': `// Server routes for ${id}, mounted by the shell under /api/${name}.\nexport async function handle(req, res, subpath, ctx) {\n  if (subpath !== '/status') return false;\n  if (req.method !== 'GET') ctx.sendJSON(res, 405, { error: 'method not allowed' });\n  else ctx.sendJSON(res, 200, { ok: true, module: '${id}' });\n  return true;\n}\n`,
  'test/routes.test.js': `// Route tests for ${id}.\nimport assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { serveModule } from '${testing}';\nimport { handle } from '../src/server/routes.js';\n\ntest('GET /status reports the module', async () => {\n  const shop = await serveModule(handle);\n  try {\n    const { status, body } = await shop.request('GET', '/status');\n    assert.equal(status, 200);\n    assert.deepEqual(body, { ok: true, module: '${id}' });\n  } finally {\n    await shop.close();\n  }\n});\n`,
};

for (const [file, content] of Object.entries(files)) {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), content);
}
console.log(`created ${id} in ${path.relative(root, dir) || dir}`);
