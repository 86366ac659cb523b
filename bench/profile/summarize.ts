/**
 * Reads a .cpuprofile (from --gateway-profile) and prints where the time went: self time by package or
 * Switchyard file, self time by function, and inclusive time of Switchyard's functions, each as a share
 * of the samples and in µs per request. A .heapprofile (from --gateway-heap-profile) is read the same
 * way, in bytes allocated per request.
 *
 *   node dist/bench/profile/summarize.js DIR/gateway-<pid>.cpuprofile|DIR/gateway-<pid>.heapprofile [rows]
 *
 * The profiler samples wall time: on a loaded machine a sample also lands where the process was
 * descheduled, so compare shares within a profile (or µs per request on a quiet machine), not runs.
 */
import { readFileSync } from 'node:fs';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  /** µs, on the monotonic clock of `process.hrtime` (V8's TimeTicks). */
  startTime?: number;
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
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  return report(profile.nodes, self, profile.requests ?? 0, rows, TIME);
}

/** The tables of `summarize` for the self time given (µs by node id), per unit of `per` (requests, windows). */
export function summarizeSelfTime(nodes: readonly ProfileNode[], self: ReadonlyMap<number, number>, per: number, rows: number): string {
  return report(nodes, self, per, rows, TIME);
}

/** A sampling heap profile (--gateway-heap-profile): a tree whose nodes carry the bytes they allocated. */
interface HeapProfileNode {
  id: number;
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: HeapProfileNode[];
}

interface HeapProfile {
  head: HeapProfileNode;
  requests?: number;
}

/** Where the bytes were allocated (objects collected since included), by module and function, per request. */
export function summarizeHeap(profile: HeapProfile, rows: number): string {
  const nodes: ProfileNode[] = [];
  const self = new Map<number, number>();
  const visit = (node: HeapProfileNode) => {
    nodes.push({ id: node.id, callFrame: node.callFrame, children: node.children.map((child) => child.id) });
    if (node.selfSize > 0) self.set(node.id, node.selfSize);
    node.children.forEach(visit);
  };
  visit(profile.head);
  return report(nodes, self, profile.requests ?? 0, rows, BYTES);
}

interface Unit {
  /** The first line, from the total, what of it was idle, and the requests. */
  headline(total: number, idle: number, requests: number): string;
  perRequest(amount: number): string;
  noun: string;
  inclusive: string;
}

const TIME: Unit = {
  headline: (total, idle, requests) => `${(total / 1e6).toFixed(1)} s sampled, ${((total - idle) / 1e6).toFixed(1)} s not idle, ${requests} /v1/ requests` +
    (requests ? `, ${((total - idle) / requests).toFixed(0)} µs not idle per request` : ''),
  perRequest: (us) => `${us.toFixed(1).padStart(9)} µs/req`,
  noun: 'self time',
  inclusive: "inclusive time of Switchyard's functions",
};

const BYTES: Unit = {
  headline: (total, _idle, requests) => `${(total / 1e6).toFixed(1)} MB allocated (sampled), ${requests} /v1/ requests` +
    (requests ? `, ${(total / requests / 1024).toFixed(1)} kB per request` : ''),
  perRequest: (bytes) => `${(bytes / 1024).toFixed(2).padStart(8)} kB/req`,
  noun: 'allocated',
  inclusive: "inclusive allocation of Switchyard's functions",
};

function report(nodes: readonly ProfileNode[], self: ReadonlyMap<number, number>, requests: number, rows: number, unit: Unit): string {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let total = 0;
  for (const amount of self.values()) total += amount;
  const frameOf = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${moduleOf(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, amount: number) => map.set(key, (map.get(key) ?? 0) + amount);
  for (const [id, amount] of self) {
    const node = byId.get(id)!;
    add(byModule, moduleOf(node.callFrame.url), amount);
    add(byFunction, frameOf(node), amount);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = frameOf(byId.get(at)!);
      if (!seen.has(frame)) add(inclusive, frame, amount);
      seen.add(frame);
    }
  }
  const idle = [...byFunction].filter(([frame]) => frame.startsWith('(idle) ')).reduce((sum, [, amount]) => sum + amount, 0);
  const table = (title: string, map: Map<string, number>, keep: (key: string) => boolean = () => true) => [
    `\n${title}`,
    ...[...map].filter(([key]) => keep(key)).sort((a, b) => b[1] - a[1]).slice(0, rows).map(([key, amount]) =>
      `${((100 * amount) / total).toFixed(2).padStart(6)}%${requests ? unit.perRequest(amount / requests) : ''}  ${key}`),
  ].join('\n');
  return [
    unit.headline(total, idle, requests),
    table(`${unit.noun} by module`, byModule),
    table(`${unit.noun} by function`, byFunction),
    table(unit.inclusive, inclusive, (key) => key.includes(' sy:')),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, rows] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node dist/bench/profile/summarize.js FILE.cpuprofile|FILE.heapprofile [rows]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile | HeapProfile;
  console.log('head' in profile ? summarizeHeap(profile, Number(rows ?? 30)) : summarize(profile, Number(rows ?? 30)));
}
