#!/usr/bin/env node
// The import graph between areas (the kernel, events/, each module, each projection, the bootstrap), as
// eslint-rules/layer-boundaries.js builds it: its arrows, its cycles and its imports up the layers.
//   node scripts/layer-graph.mjs [root]          summary: cycles and upward imports (exit 1 if any)
//   node scripts/layer-graph.mjs [root] --arrows  every arrow between areas with its number of imports
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAYERS, areaCycles, areaGraph, upwardImports } from '../eslint-rules/layer-boundaries.js';

const args = process.argv.slice(2);
const root = path.resolve(args.find((arg) => !arg.startsWith('--')) ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const graph = areaGraph(root);

console.log(`layers, bottom up: ${LAYERS.join(' < ')}`);
if (args.includes('--arrows')) {
  for (const [from, arrows] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [to, imports] of [...arrows].sort(([a], [b]) => a.localeCompare(b))) console.log(`  ${from} -> ${to} (${imports.length})`);
  }
}
const cycles = areaCycles(graph);
console.log(`cycles between areas: ${cycles.length}`);
for (const group of cycles) {
  console.log(`  ${group.join(', ')}`);
  for (const from of group) {
    for (const [to, imports] of graph.get(from) ?? []) if (group.includes(to)) for (const line of imports) console.log(`    ${line}`);
  }
}
const upward = upwardImports(graph);
console.log(`imports up the layers: ${upward.length}`);
for (const line of upward) console.log(`  ${line}`);
process.exitCode = cycles.length || upward.length ? 1 : 0;
