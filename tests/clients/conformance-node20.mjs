// Node 20 (this project's CI) lacks fs.globSync, which
// @modelcontextprotocol/conformance (engines: node >= 22) imports but uses
// only outside `server` runs. This loader hook swaps the import for a stub
// that names the reason if it is ever reached. Run as:
//   node --import ./clients/conformance-node20.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js …
import { register } from 'node:module';

register('data:text/javascript,' + encodeURIComponent(`
export async function load(url, ctx, next) {
  const r = await next(url, ctx);
  if (!url.includes('@modelcontextprotocol/conformance/dist/index.js') || !r.source) return r;
  let s = r.source.toString(), name;
  s = s.replace(/globSync as ([A-Za-z_$][A-Za-z0-9_$]*),/, (m, n) => { name = n; return ''; });
  if (!name) return r;
  s = s.replace(/^#!.*\\n/, '');
  s = 'const ' + name + '=(p)=>{throw new Error("fs.globSync needs node 22: "+p)};\\n' + s;
  return { ...r, source: s };
}`));
