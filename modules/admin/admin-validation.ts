import { type ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { type JsonBoundsProblem, type JsonShape, findJsonBoundsProblem } from '../canonical/index.js';
import { AdminApiError, type FieldProblem } from './admin-error.js';
import { DEFINITION_MEMBER } from './definition-member.js';

/** Admin bodies are structured throughout: no field holds client-defined JSON. */
const ADMIN_BODY_SHAPE: JsonShape = { pathStyle: 'brackets', freeForm: [] };

/**
 * Bounds the body before class-transformer, which copies it recursively (a deep body would overflow the
 * stack) and assigns keys named like Object.prototype members onto instances, where whitelisting no
 * longer sees them (a `constructor` field would be silently dropped).
 */
class BoundedValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body') {
      const problem = findJsonBoundsProblem(value, ADMIN_BODY_SHAPE);
      if (problem) throw boundsError(problem);
    }
    return super.transform(value, metadata);
  }
}

function boundsError(problem: JsonBoundsProblem): AdminApiError {
  const field = (path: string, message: string) => new AdminApiError(400, 'validation_failed', `The request body is invalid: ${path}: ${message}.`, [{ path, message }]);
  switch (problem.kind) {
    case 'prototype_key':
      return field(problem.path, 'unknown field');
    case 'too_deep':
      return field(problem.path, `nested deeper than ${problem.limit} levels`);
    case 'too_many_values':
      return problem.path === null
        ? new AdminApiError(400, 'validation_failed', `The request body holds more than ${problem.limit} JSON values.`)
        : field(problem.path, `holds more than ${problem.limit} values`);
  }
}

/**
 * Request bodies are validated against class-validator DTOs. Unknown fields are refused (a typo must not
 * silently do nothing), and every problem is reported with its path in the body. Values are never
 * echoed back: a misplaced secret must not come back in an error.
 */
export function adminValidationPipe(): ValidationPipe {
  return new BoundedValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => {
      const fields = fieldProblems(errors);
      const summary = fields.length === 1 ? `${fields[0].path}: ${fields[0].message}` : `${fields.length} problems in the request body`;
      return new AdminApiError(400, 'validation_failed', `The request body is invalid: ${summary}.`, fields);
    },
  });
}

/** The same rules for query strings (history and analytics reads): unknown parameters are refused too. */
export function adminQueryValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => {
      const fields = fieldProblems(errors).map((problem) => (problem.message === 'unknown field' ? { ...problem, message: 'unknown parameter' } : problem));
      const summary = fields.length === 1 ? `${fields[0].path}: ${fields[0].message}` : `${fields.length} problems in the query`;
      return new AdminApiError(400, 'validation_failed', `The query is invalid: ${summary}.`, fields);
    },
  });
}

export function fieldProblems(errors: readonly ValidationError[], parent = ''): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const error of errors) {
    const path = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    // A member read by the configuration file's reader: its problems, each at its own path below the member.
    for (const [, message] of constraints.filter(([constraint]) => constraint === DEFINITION_MEMBER)) {
      for (const problem of JSON.parse(message) as FieldProblem[]) problems.push({ path: problem.path ? `${path}.${problem.path}` : path, message: problem.message });
    }
    const messages = constraints.filter(([constraint]) => constraint !== DEFINITION_MEMBER).map(([constraint, message]) => describe(constraint, message, error.property, path));
    if (messages.length) problems.push({ path, message: messages.join('; ') });
    if (error.children?.length) problems.push(...fieldProblems(error.children, path));
  }
  return problems;
}

/** class-validator's name for a property the DTO does not declare (its `whitelistValidation` constraint). */
const UNKNOWN_PROPERTY = 'whitelistValidation';

/**
 * What a field's problem is called: an unknown field by its constraint's name, any other in class-validator's
 * own words ("x must be …", "each value in x …"), with the field named by its full path.
 */
function describe(constraint: string, message: string, property: string, path: string): string {
  if (constraint === UNKNOWN_PROPERTY) return 'unknown field';
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message.replace(property, path);
}
