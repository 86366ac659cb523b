import { Injectable } from '@nestjs/common';
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const ASK = 'switchyard:cluster-metrics';
const ANSWER = 'switchyard:cluster-metrics-answer';
const ASK_TIMEOUT_MS = 6_000;

interface Ask { type: typeof ASK; id: number }
interface Answer { type: typeof ANSWER; id: number; text?: string; error?: string }

/**
 * Metrics under SWITCHYARD_WORKERS=N. A scrape reaches whichever worker the shared port hands it to,
 * so a worker never answers with its own numbers alone (counters would jump between scrapes): it asks
 * the primary, which gathers every worker's registry over node:cluster's IPC (prom-client's
 * AggregatorRegistry) and sums them — gauges of per-worker state (breaker state, projection lag) take
 * the maximum. One process without workers answers from its own registry.
 */
@Injectable()
export class ClusterMetrics {
  private nextId = 0;

  constructor() {
    // A worker answers the primary's collection requests from its registries (set per gateway below).
    if (cluster.isWorker) new AggregatorRegistry();
  }

  /** Registers this worker's registry for the primary's collection. */
  adopt(registry: Registry): void {
    if (cluster.isWorker) AggregatorRegistry.setRegistries([registry]);
  }

  async metrics(registry: Registry): Promise<string> {
    if (!cluster.isWorker || !process.send) return registry.metrics();
    const id = ++this.nextId;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error('the primary did not answer in time')), ASK_TIMEOUT_MS);
      const onMessage = (message: Answer) => {
        if (message?.type !== ANSWER || message.id !== id) return;
        finish(message.error ? new Error(message.error) : null, message.text ?? '');
      };
      const finish = (error: Error | null, text = '') => {
        clearTimeout(timer);
        process.off('message', onMessage);
        if (error) reject(new Error(`cluster metrics unavailable: ${error.message}`));
        else resolve(text);
      };
      process.on('message', onMessage);
      process.send!({ type: ASK, id } satisfies Ask);
    });
  }
}

/** In the primary: answers the workers' requests for the whole cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Ask) => {
    if (message?.type !== ASK) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id: message.id, text } satisfies Answer),
      (error: Error) => worker.send({ type: ANSWER, id: message.id, error: error.message } satisfies Answer),
    );
  });
}
