/**
 * Time enters the domain through this port so deciders stay pure (they receive `now` in the command
 * metadata) and tests can pin it.
 */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
