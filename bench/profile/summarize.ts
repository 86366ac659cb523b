/**
 * Reads a .cpuprofile (from --gateway-profile) and prints where the time went: self time by package or
 * Switchyard file, self time by function, and inclusive time of Switchyard's functions, each as a share
 * of the samples and in µs per request.
 *
 *   node dist/bench/profile/summarize.js DIR/gateway-<pid>.cpuprofile [rows]
 *
 * The profiler samples wall time: on a loaded machine a sample also lands where the process was
 * descheduled, so compare shares within a profile (or µs per request on a quiet machine), not runs.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  requests?: number;
}

/** npm:<package>, sy:<file under dist>, node:<module>, or (vm) for V8's own (GC, idle, natives). */
export function moduleOf(url: string): string {
  if (!url) return '(vm)';
  const path = url.replace(/^file:\/\//, '');
  const npm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (npm) return `npm:${npm[1]}`;
  const own = /\/dist\/(.*)$/.exec(path);
  if (own) return `sy:${own[1]}`;
  return path;
}

export function summarize(profile: Profile, rows: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + delta);
    total += delta;
  });
  const frameOf = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${moduleOf(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    add(byModule, moduleOf(node.callFrame.url), us);
    add(byFunction, frameOf(node), us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = frameOf(byId.get(at)!);
      if (!seen.has(frame)) add(inclusive, frame, us);
      seen.add(frame);
    }
  }
  const requests = profile.requests ?? 0;
  const idle = [...byFunction].filter(([frame]) => frame.startsWith('(idle) ')).reduce((sum, [, us]) => sum + us, 0);
  const table = (title: string, map: Map<string, number>, keep: (key: string) => boolean = () => true) => [
    `\n${title}`,
    ...[...map].filter(([key]) => keep(key)).sort((a, b) => b[1] - a[1]).slice(0, rows).map(([key, us]) =>
      `${((100 * us) / total).toFixed(2).padStart(6)}%${requests ? `${(us / requests).toFixed(1).padStart(9)} µs/req` : ''}  ${key}`),
  ].join('\n');
  return [
    `${(total / 1e6).toFixed(1)} s sampled, ${((total - idle) / 1e6).toFixed(1)} s not idle, ${requests} /v1/ requests` +
      (requests ? `, ${((total - idle) / requests).toFixed(0)} µs not idle per request` : ''),
    table('self time by module', byModule),
    table('self time by function', byFunction),
    table("inclusive time of Switchyard's functions", inclusive, (key) => key.includes(' sy:')),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, rows] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node dist/bench/profile/summarize.js FILE.cpuprofile [rows]');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(rows ?? 30)));
}
