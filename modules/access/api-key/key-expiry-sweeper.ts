import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { DomainError, WrongExpectedVersionError } from '../../../src/kernel/index.js';
import { ApiKeyCommand } from '../access.commands.js';

const SWEEP_INTERVAL_MS = 1000;

/**
 * Records `ApiKeyExpired` for keys past their expiry. Authentication already refuses such a key at the
 * instant it expires (it compares `expiresAt` on every request), so the event is the durable record,
 * not the enforcement. Every node sweeps; when two race, the loser's append fails on the expected
 * version or the aggregate says the key is no longer active, and that is fine.
 */
@Injectable()
export class KeyExpirySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('KeyExpiry');
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;

  constructor(
    private readonly commands: CommandBus,
    private readonly keys: KeyIndexProjection,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Expires every due key once; returns how many this node recorded. */
  async sweep(now: Date = new Date()): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let expired = 0;
    try {
      for (const [keyId, key] of this.keys.state.keys) {
        if (key.status !== 'active' || key.grant.expiresAt === null || Date.parse(key.grant.expiresAt) > now.getTime()) continue;
        try {
          await this.commands.execute(new ApiKeyCommand.Message({ type: 'ExpireApiKey', keyId }, { now, actor: 'system:key-expiry' }));
          expired++;
        } catch (error) {
          if (error instanceof WrongExpectedVersionError || error instanceof DomainError) continue; // another node got there first
          this.logger.warn(`could not record the expiry of key ${keyId}: ${(error as Error).message}`);
        }
      }
    } finally {
      this.sweeping = false;
    }
    return expired;
  }
}
