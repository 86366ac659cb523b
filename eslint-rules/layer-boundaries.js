import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The dependency direction of DESIGN §3 (docs/architecture.md), checked on every relative import,
 * export-from and literal dynamic import, types included:
 * - layers, bottom up: migrations, kernel (src/kernel), events, projections, modules, bootstrap (the rest
 *   of src/). An import points down or stays in its layer, never up: the kernel imports nothing but
 *   itself and migrations/, events/ only the kernel, a projection events/, the kernel and other
 *   projections, a module all of those and other modules, the bootstrap anything;
 * - across areas, the kernel, events/, a module and a projection are imported only through their
 *   index.js (the bootstrap may wire a module's internal files, never a projection's);
 * - within a layer, the areas (modules/<name>, projections/<name>) form no cycle: an import from one
 *   module (or projection) to another is refused when the other already reaches back to it.
 * Files of the same area import each other freely. Tests, bench/ and scripts/ are free.
 */

/** The layers, bottom up. */
export const LAYERS = ['migrations', 'kernel', 'events', 'projections', 'modules', 'bootstrap'];

/** The directories whose files belong to an area. */
const TREE = ['src', 'modules', 'projections', 'events', 'migrations'];

/** `kernel`, `bootstrap`, `events`, `migrations`, `modules/<name>`, `projections/<name>`, or null (elsewhere). */
export function areaOf(relative) {
  const parts = relative.split(path.sep);
  if (parts[0] === 'src') return parts[1] === 'kernel' ? 'kernel' : 'bootstrap';
  if ((parts[0] === 'modules' || parts[0] === 'projections') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  if (parts[0] === 'events' || parts[0] === 'migrations') return parts[0];
  return null;
}

/** The layer an area belongs to: `modules/access` → `modules`. */
export function layerOf(area) {
  return area.split('/')[0];
}

/** Bottom = 0. */
function rank(area) {
  return LAYERS.indexOf(layerOf(area));
}

/** The one file of the kernel, events/, a module or a projection others may import, relative to the root. */
function surfaceOf(area) {
  return area === 'kernel' ? path.join('src', 'kernel', 'index.js') : path.join(...area.split('/'), 'index.js');
}

/** Why `from` may not import `target` (the file `targetRelative`), or null when it may; cycles aside. */
export function violation(from, target, targetRelative) {
  if (from === target || target === 'migrations') return null;
  if (rank(target) > rank(from)) {
    if (from === 'kernel') return `the kernel imports nothing outside src/kernel (found ${target})`;
    if (target === 'bootstrap') return `${from} must not import the bootstrap (src/ outside the kernel); take settings and tokens from the kernel or the module itself`;
    return `${from} is in the ${layerOf(from)} layer, below ${layerOf(target)}: it imports nothing from ${target} ` +
      `(layers, bottom up: ${LAYERS.slice(1).join(', ')}; an import points down, never up)`;
  }
  if (from === 'bootstrap' && layerOf(target) !== 'projections') return null;
  const surface = surfaceOf(target);
  if (targetRelative !== surface) return `import ${target} through its public surface ${surface.split(path.sep).join('/')}, not its internal file`;
  return null;
}

function sourceFiles(directory, found = []) {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) sourceFiles(file, found);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) found.push(file);
  }
  return found;
}

/**
 * The area graph of the tree under `root` as the files on disk have it: area → area it imports → the
 * imports (`file -> file`) that make the arrow. Every relative import, export-from and literal dynamic
 * import counts, types included (TypeScript's own pre-processor finds them).
 */
export function areaGraph(root) {
  const graph = new Map();
  for (const top of TREE) {
    if (!fs.existsSync(path.join(root, top))) continue;
    for (const file of sourceFiles(path.join(root, top))) {
      const relative = path.relative(root, file);
      const from = areaOf(relative);
      if (!graph.has(from)) graph.set(from, new Map());
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const targetRelative = path.relative(root, path.resolve(path.dirname(file), fileName));
        const to = areaOf(targetRelative);
        if (to === null || to === from) continue;
        const arrows = graph.get(from);
        if (!arrows.has(to)) arrows.set(to, []);
        arrows.get(to).push(`${relative} -> ${targetRelative}`.split(path.sep).join('/'));
      }
    }
  }
  return graph;
}

/** A path of areas from `start` to `goal` in the graph (both ends included), or null. */
export function pathBetween(graph, start, goal) {
  const cameFrom = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const area = queue.shift();
    if (area === goal) {
      const found = [];
      for (let at = goal; at !== null; at = cameFrom.get(at)) found.unshift(at);
      return found;
    }
    for (const next of graph.get(area)?.keys() ?? []) {
      if (!cameFrom.has(next)) {
        cameFrom.set(next, area);
        queue.push(next);
      }
    }
  }
  return null;
}

/** Every cycle's areas (strongly connected groups of more than one area, Tarjan), each sorted. */
export function areaCycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (area) => {
    index.set(area, counter);
    low.set(area, counter);
    counter++;
    stack.push(area);
    onStack.add(area);
    for (const next of graph.get(area)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(area, Math.min(low.get(area), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(area, Math.min(low.get(area), index.get(next)));
      }
    }
    if (low.get(area) !== index.get(area)) return;
    const group = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      group.push(member);
    } while (member !== area);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const area of graph.keys()) if (!index.has(area)) visit(area);
  return cycles;
}

/** Every arrow from a lower layer to a higher one, as `file -> file` imports. */
export function upwardImports(graph) {
  const found = [];
  for (const [from, arrows] of graph) {
    for (const [to, imports] of arrows) if (rank(to) > rank(from)) found.push(...imports);
  }
  return found;
}

/** One graph per root for the whole ESLint run (a long-lived editor server sees the tree as it was at its first lint). */
const graphs = new Map();

function graphOf(root) {
  if (!graphs.has(root)) graphs.set(root, areaGraph(root));
  return graphs.get(root);
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Enforces the layers (kernel, events, projections, modules, bootstrap), public surfaces and acyclic areas (DESIGN §3, docs/architecture.md).' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { boundary: '{{reason}}.' },
  },
  create(context) {
    const root = context.options[0]?.root ?? context.cwd;
    const file = context.filename;
    const from = areaOf(path.relative(root, file));
    if (from === null || from === 'migrations') return {};
    const check = (node, source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const targetRelative = path.relative(root, path.resolve(path.dirname(file), source.value));
      const target = areaOf(targetRelative);
      if (target === null) return;
      let reason = violation(from, target, targetRelative);
      if (!reason && target !== from && layerOf(target) === layerOf(from) && from.includes('/')) {
        const back = pathBetween(graphOf(root), target, from);
        if (back) reason = `${from} importing ${target} closes a cycle (${[from, ...back].join(' → ')}); the areas of a layer form no cycle: move what both need below them, or turn the arrow around`;
      }
      if (reason) context.report({ node: source, messageId: 'boundary', data: { reason } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source : null),
    };
  },
};
