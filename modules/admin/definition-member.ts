import { ValidateBy, type ValidationOptions } from 'class-validator';
import { type DefinitionNode, type DefinitionProblem, DefinitionReader, isDefinitionNode } from '../../src/kernel/index.js';

/** The constraint's name, by which the admin validation pipe unpacks its problems into field paths. */
export const DEFINITION_MEMBER = 'definitionMember';

/** Reads one mapping of a definition at `path`, reporting its problems on the reader. */
export type DefinitionMemberReader = (reader: DefinitionReader, node: DefinitionNode, path: string) => unknown;

/**
 * A member of a class-validator DTO that the configuration file also writes (a deployment's `limits`),
 * validated by the file's own reader rather than by a second copy of its rules: each problem is reported
 * at its path below the member (`limits.rpm`), in the file's words. Leave the member a plain object (no
 * `@Type`), and read it in the event form with the same reader once the body is valid.
 */
export function DefinitionMember(read: DefinitionMemberReader, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: DEFINITION_MEMBER,
      validator: {
        validate: (value: unknown) => memberProblems(read, value).length === 0,
        // Carried to the pipe as JSON: the pipe turns each into a field problem of its own.
        defaultMessage: (args) => JSON.stringify(memberProblems(read, args?.value)),
      },
    },
    options,
  );
}

function memberProblems(read: DefinitionMemberReader, value: unknown): DefinitionProblem[] {
  if (!isDefinitionNode(value)) return [{ path: '', message: 'must be a mapping' }];
  const reader = new DefinitionReader();
  read(reader, value, '');
  return [...reader.problems];
}
