import { inspect } from 'node:util';

/**
 * A resolved provider secret. It serialises and prints as "[redacted]", so a snapshot that reaches a
 * log line or an API response by mistake still cannot leak it.
 */
export class Credential {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'Credential([redacted])';
  }
}
