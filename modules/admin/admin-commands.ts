import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainEvent } from '../../events/index.js';
import { KeyIndexProjection } from '../../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';
import { firstHeader } from '../canonical/index.js';
import { type CommandContext, type CommandOutcome, type ExecuteOptions, ProjectionRunner } from '../../src/kernel/index.js';
import { AdminApiError } from './admin-error.js';
import { principalOf } from './admin.guard.js';

/** A `deciderCommand()` binding: the CQRS message class of one aggregate. */
export interface CommandBinding<Command> {
  Message: new (command: Command, context: CommandContext, options?: ExecuteOptions) => object;
}

/**
 * Sends an aggregate command on behalf of an admin request: actor (and a console session's role) from the guard, `If-Match` as the
 * expected stream version, the request id as correlation id. Replies carry the new version as `ETag`,
 * and are sent once this node's projections have read the appended event (read-your-writes).
 */
@Injectable()
export class AdminCommands {
  constructor(
    private readonly bus: CommandBus,
    private readonly runner: ProjectionRunner,
    private readonly routing: RoutingSnapshotProjection,
    private readonly keys: KeyIndexProjection,
  ) {}

  async send<Command>(
    binding: CommandBinding<Command>,
    command: Command,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<CommandOutcome<DomainEvent>> {
    const principal = principalOf(request);
    // A change made from the console records the role it was made in beside the user (`console:<user>`).
    const context = { now: new Date(), actor: principal.actor, ...(principal.console ? { actorRole: principal.console.role } : {}) };
    const options: ExecuteOptions = { expectedVersion: ifMatch(request), correlationId: request.id };
    const outcome: CommandOutcome<DomainEvent> = await this.bus.execute(new binding.Message(command, context, options));
    if (outcome.position !== null) await this.runner.waitForEvent([this.routing.name, this.keys.name], outcome.position);
    else await this.fresh();
    reply.header('etag', etag(outcome.version));
    return outcome;
  }

  /** Reads on this node see every change committed before the request (read-your-writes). */
  async fresh(): Promise<void> {
    await this.runner.catchUp([this.routing.name, this.keys.name]);
  }
}

export function etag(version: number): string {
  return `"${version}"`;
}

/** `If-Match: "3"` (or `3`, `W/"3"`) → 3; `*` or absent → no expectation. */
export function ifMatch(request: FastifyRequest): number | undefined {
  const header = request.headers['if-match'];
  const value = firstHeader(header)?.trim();
  if (!value || value === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,9})"?$/.exec(value);
  if (!match) throw new AdminApiError(400, 'invalid_if_match', 'If-Match must be the stream version from an ETag, e.g. "3".');
  return Number(match[1]);
}
