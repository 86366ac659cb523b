import { DEFINITION_ID, type DefinitionNode, type DefinitionReader } from '../../../src/kernel/index.js';

/**
 * `contentPolicy: <id>` on a tenant, a key or an alias: the id of a content policy, or null when absent.
 * Whether it names a live policy needs the running state, so apply's plan and the publication guard check that.
 */
export function readContentPolicyReference(reader: DefinitionReader, node: DefinitionNode, path: string): string | null {
  const value = reader.optionalString(node, path, 'contentPolicy');
  if (value !== null && !DEFINITION_ID.test(value)) reader.problem(`${path}.contentPolicy`, 'must be a content policy id');
  return value;
}
