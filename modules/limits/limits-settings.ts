/** DI token of the limits context's settings. */
export const LIMITS_SETTINGS = Symbol('LIMITS_SETTINGS');

/** What rate limits and budgets need from the node's configuration. */
export interface LimitsSettings {
  /** Where counters are shared by every node; null = in process (one node). */
  redisUrl: string | null;
  /** Names this node's Redis connection and the actor of the budget events it records. */
  nodeId: string;
  /** SWITCHYARD_REDIS_NAMESPACE: the counters of installations sharing one Redis stay apart. */
  namespace?: string;
}
