import type { PipeTransform } from '@nestjs/common';
import { type DefinitionNode, DefinitionReader, isDefinitionNode } from '../../src/kernel/index.js';
import { AdminApiError } from './admin-error.js';

/** Reads a request body in the configuration file's shape; reports problems on the reader, returns the value. */
export type DefinitionBodyReader<T> = (reader: DefinitionReader, body: DefinitionNode) => T;

/**
 * The body of an admin write that says what the configuration file says (a tenant, a key, limits, a
 * budget), read by the same readers as the file (DefinitionReader and the definitions built on it), so
 * the API and the file accept the same values and refuse the others in the same words: a 400
 * `validation_failed` listing every problem with its path in the body. Values are never echoed back.
 * The admin validation pipe has bounded the body (depth, size, prototype keys) before this runs.
 */
export function definitionBody<T>(read: DefinitionBodyReader<T>): PipeTransform<unknown, T> {
  return {
    transform(value: unknown): T {
      if (!isDefinitionNode(value)) throw new AdminApiError(400, 'validation_failed', 'The request body must be a JSON object.');
      const reader = new DefinitionReader();
      const result = read(reader, value);
      const fields = reader.problems.map((problem) => ({ path: problem.path || '(body)', message: problem.message }));
      if (fields.length) {
        const summary = fields.length === 1 ? `${fields[0].path}: ${fields[0].message}` : `${fields.length} problems in the request body`;
        throw new AdminApiError(400, 'validation_failed', `The request body is invalid: ${summary}.`, fields);
      }
      return result;
    },
  };
}
