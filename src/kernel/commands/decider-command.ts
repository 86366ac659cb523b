import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { DomainEvent } from './domain-event.js';
import { CommandExecutor, type CommandOutcome, type ExecuteOptions } from './command-executor.js';
import type { CommandContext, Decider } from './decider.js';

/** A CQRS command carrying one aggregate command, who sent it, and its concurrency expectation. */
export interface DeciderCommandMessage<Command> {
  readonly command: Command;
  readonly context: CommandContext;
  readonly options: ExecuteOptions;
}

/**
 * Binds an aggregate (decider + stream naming) to @nestjs/cqrs: a command class and its handler. The
 * handler loads, decides and appends through the CommandExecutor and holds no business rule.
 */
export function deciderCommand<Command, Event extends DomainEvent, State>(
  name: string,
  decider: Decider<Command, Event, State>,
  streamOf: (command: Command) => string,
) {
  const Message = class implements DeciderCommandMessage<Command> {
    constructor(
      readonly command: Command,
      readonly context: CommandContext,
      readonly options: ExecuteOptions = {},
    ) {}
  };
  Object.defineProperty(Message, 'name', { value: `${name}Command` });

  class Handler implements ICommandHandler<InstanceType<typeof Message>, CommandOutcome<Event>> {
    constructor(private readonly executor: CommandExecutor) {}

    execute(message: InstanceType<typeof Message>): Promise<CommandOutcome<Event>> {
      return this.executor.execute(streamOf(message.command), decider, message.command, message.context, message.options);
    }
  }
  Object.defineProperty(Handler, 'name', { value: `${name}CommandHandler` });
  Reflect.defineMetadata('design:paramtypes', [CommandExecutor], Handler);
  CommandHandler(Message)(Handler);
  return { Message, Handler };
}
