import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../../canonical/index.js';
import { ConfigurationError, type SettingsEnv, declareSettings, definedOnly, positiveIntegerSetting } from '../../../src/kernel/index.js';

/** The variables readDocumentOverrides reads; the defaults shown are DEFAULT_DOCUMENT_LIMITS'. */
export const DOCUMENT_ENVIRONMENT = declareSettings('modules/inference/pipeline', {
  SWITCHYARD_MAX_DOCUMENT_BYTES: {
    type: 'integer > 0 (bytes)',
    default: `\`${DEFAULT_DOCUMENT_LIMITS.maxDocumentBytes}\` (2 MiB)`,
    meaning: 'the most one document (PDF, text, file part) of a chat request may have, decoded. Past it: 413 request_too_large naming the document, nothing sent upstream',
  },
  SWITCHYARD_MAX_REQUEST_DOCUMENT_BYTES: {
    type: 'integer > 0 (bytes)',
    default: `\`${DEFAULT_DOCUMENT_LIMITS.maxRequestDocumentBytes}\` (3 MiB)`,
    meaning: "the most all documents of one chat request may have together, decoded (at least the per-document limit; the 4 MiB body limit holds about 3 MiB of base64 anyway). Past it: 413 request_too_large",
  },
});

/** Only the variables that are set, each a positive integer; the request total may not be below the per-document limit. */
export function readDocumentOverrides(env: SettingsEnv): Partial<DocumentLimits> {
  const overrides = definedOnly({
    maxDocumentBytes: positiveIntegerSetting(env, DOCUMENT_ENVIRONMENT.SWITCHYARD_MAX_DOCUMENT_BYTES),
    maxRequestDocumentBytes: positiveIntegerSetting(env, DOCUMENT_ENVIRONMENT.SWITCHYARD_MAX_REQUEST_DOCUMENT_BYTES),
  });
  resolveDocumentLimits(overrides);
  return overrides;
}

export function resolveDocumentLimits(overrides: Partial<DocumentLimits> = {}): DocumentLimits {
  const limits = { ...DEFAULT_DOCUMENT_LIMITS, ...overrides };
  if (limits.maxRequestDocumentBytes < limits.maxDocumentBytes) {
    throw new ConfigurationError('SWITCHYARD_MAX_REQUEST_DOCUMENT_BYTES must be at least SWITCHYARD_MAX_DOCUMENT_BYTES');
  }
  return limits;
}
