import type { Sample } from './sample.js';

/**
 * Waits for the phase's outstanding requests until the deadline, then destroys the dispatcher: what had
 * not finished by then is reported as `drain-timeout` rather than waited for.
 */
export async function drainBy(work: Promise<unknown>, deadline: number, destroy: () => Promise<void>, samples: () => readonly Sample[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = await Promise.race([
    work.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, deadline - performance.now())))),
  ]);
  clearTimeout(timer);
  if (!expired) return;
  await destroy().catch(() => undefined);
  await work;
  for (const sample of samples()) if (sample.outcome !== 'ok' && sample.endAt >= deadline) sample.outcome = 'drain-timeout';
}
