import path from 'node:path';

/**
 * The dependency direction of DESIGN §3, checked on every relative import, export-from and literal
 * dynamic import:
 * - src/kernel imports only itself (and migrations/, the event store's schema): nothing from modules/,
 *   projections/, events/ or the bootstrap;
 * - events/ imports the kernel only through src/kernel/index.js;
 * - a module imports another module, a projection, the kernel and events/ only through their index.js,
 *   and nothing from the bootstrap (the rest of src/);
 * - a projection imports modules, another projection, the kernel and events/ only through their
 *   index.js, and nothing from the bootstrap.
 * Files of the same module (or projection) import each other freely. The bootstrap and tests are free.
 */

/** `kernel`, `bootstrap`, `events`, `migrations`, `modules/<name>`, `projections/<name>`, or null (elsewhere). */
function areaOf(relative) {
  const parts = relative.split(path.sep);
  if (parts[0] === 'src') return parts[1] === 'kernel' ? 'kernel' : 'bootstrap';
  if ((parts[0] === 'modules' || parts[0] === 'projections') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  if (parts[0] === 'events' || parts[0] === 'migrations') return parts[0];
  return null;
}

/** The one file of the kernel, events/, a module or a projection others may import, relative to the root. */
function surfaceOf(area) {
  return area === 'kernel' ? path.join('src', 'kernel', 'index.js') : path.join(...area.split('/'), 'index.js');
}

/** Why `from` may not import `target`, or null when it may. */
function violation(from, target, targetRelative) {
  if (from === target) return null;
  if (from === 'kernel') {
    return target === 'migrations' ? null : `the kernel imports nothing outside src/kernel (found ${target})`;
  }
  if (from === 'events' || from.startsWith('modules/') || from.startsWith('projections/')) {
    if (target === 'bootstrap') return `${from} must not import the bootstrap (src/ outside the kernel); take settings and tokens from the kernel or the module itself`;
    if (target === 'migrations') return null;
    if (from === 'events' && (target.startsWith('modules/') || target.startsWith('projections/'))) return 'events/ imports only the kernel';
    const surface = surfaceOf(target);
    if (targetRelative !== surface) return `import ${target} through its public surface ${surface.split(path.sep).join('/')}, not its internal file`;
  }
  return null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Enforces the kernel / modules / projections import direction and public surfaces (DESIGN §3).' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { boundary: '{{reason}}.' },
  },
  create(context) {
    const root = context.options[0]?.root ?? context.cwd;
    const file = context.filename;
    const from = areaOf(path.relative(root, file));
    if (from === null || from === 'bootstrap' || from === 'migrations') return {};
    const check = (node, source) => {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const targetRelative = path.relative(root, path.resolve(path.dirname(file), source.value));
      const target = areaOf(targetRelative);
      if (target === null) return;
      const reason = violation(from, target, targetRelative);
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
