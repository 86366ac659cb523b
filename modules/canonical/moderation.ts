/** The gateway's provider-neutral moderation request and answer (OpenAI's `/v1/moderations` is the one wire that serves it). */
export interface ModerationRequest {
  /** The texts to classify, each judged on its own. */
  inputs: string[];
}

export interface ModerationResponse {
  providerRequestId: string | null;
  /** One result per input, in input order: whether it was flagged, and the categories that were. */
  results: Array<{ flagged: boolean; categories: string[] }>;
}
