import { type KeyScope, PLATFORM_SCOPE } from '../../events/index.js';
import type { ConsoleRole } from './admin-area.js';
import { AdminApiError } from './admin-error.js';

/** What a key may hand out when it administers one tenant: its own scopes and aliases (null = every alias). */
export interface OwnGrant {
  scopes: readonly KeyScope[];
  aliases: readonly string[] | null;
}

/**
 * Who sent an admin request, and how far its authority reaches. The admin token and a gateway key with
 * `admin:platform` administer the whole platform; a key with `admin` (and not `admin:platform`)
 * administers its own tenant only: it sees and changes that tenant's keys, requests, spend and audit
 * entries, and everything of another tenant answers as if it did not exist (404), so tenants cannot be
 * enumerated through it. A console session is platform-wide too, but limited by its role (`console`).
 * `actor` is what event metadata records: `admin:<token id>`, `key:<key id>` or `console:<user>`.
 */
export class AdminPrincipal {
  private constructor(
    readonly actor: string,
    /** null: platform-wide; otherwise the one tenant this principal administers. */
    readonly tenantId: string | null,
    private readonly own: OwnGrant | null,
    /** The console user and role when the request came with a session cookie; null for the token and keys. */
    readonly console: { user: string; role: ConsoleRole } | null = null,
  ) {}

  static platform(actor: string): AdminPrincipal {
    return new AdminPrincipal(actor, null, null);
  }

  static tenant(actor: string, tenantId: string, own: OwnGrant): AdminPrincipal {
    return new AdminPrincipal(actor, tenantId, { scopes: [...own.scopes], aliases: own.aliases === null ? null : [...own.aliases] });
  }

  /** A console session: platform-wide, within what its role allows (the guard checks it per route). */
  static consoleUser(user: string, role: ConsoleRole): AdminPrincipal {
    return new AdminPrincipal(`console:${user}`, null, null, { user, role });
  }

  get isPlatform(): boolean {
    return this.tenantId === null;
  }

  /** Whether `tenantId` is within reach: every tenant for the platform, only its own for a tenant admin. */
  reaches(tenantId: string): boolean {
    return this.tenantId === null || this.tenantId === tenantId;
  }

  /** The 404 a tenant that does not exist gets, unless `tenantId` is within reach. */
  requireTenant(tenantId: string): void {
    if (!this.reaches(tenantId)) throw tenantNotFound(tenantId);
  }

  /**
   * The tenant a read or purge is confined to. The platform gets what it asked for (undefined = every
   * tenant, null); a tenant admin always gets its own tenant, and naming another one is that tenant's
   * 404, whether it exists or not.
   */
  confine(requested: string | undefined): string | null {
    if (this.tenantId === null) return requested ?? null;
    if (requested !== undefined) this.requireTenant(requested);
    return this.tenantId;
  }

  /** The 403 of a platform-only operation, for a tenant admin; nothing for the platform. */
  requirePlatform(): void {
    if (this.tenantId !== null) throw platformScopeRequired();
  }

  /**
   * Why a key's grant (its scopes, and its aliases: empty = every alias) reaches beyond what this
   * principal holds itself, or null when it does not. A tenant admin hands out, or acts on keys with, only
   * scopes it has and aliases it may call itself, so it can never make or take over a key stronger than its
   * own (never an `admin:platform` key). The platform may grant anything.
   */
  grantExcess(scopes: readonly string[], aliases: readonly string[]): string | null {
    if (this.own === null) return null;
    const problems: string[] = [];
    const extra = scopes.filter((scope) => !(this.own!.scopes as readonly string[]).includes(scope));
    if (extra.length) {
      problems.push(`scope${extra.length > 1 ? 's' : ''} ${extra.map((s) => `'${s}'`).join(', ')}` +
        `${extra.includes(PLATFORM_SCOPE) ? ` (${PLATFORM_SCOPE} is granted by the platform only)` : ''}`);
    }
    if (this.own.aliases !== null) {
      const allowed = new Set(this.own.aliases);
      if (aliases.length === 0) problems.push('every alias (this key may call only some)');
      else {
        const outside = aliases.filter((alias) => !allowed.has(alias));
        if (outside.length) problems.push(`alias${outside.length > 1 ? 'es' : ''} ${outside.map((a) => `'${a}'`).join(', ')}`);
      }
    }
    return problems.length ? problems.join(' and ') : null;
  }
}

/** What a tenant that does not exist gets — and, for a tenant admin, every tenant but its own. */
export function tenantNotFound(tenantId: string): AdminApiError {
  return new AdminApiError(404, 'tenant_not_found', `Tenant ${tenantId} does not exist.`);
}

export function platformScopeRequired(): AdminApiError {
  return new AdminApiError(
    403, 'platform_scope_required',
    `This is platform administration: it needs the admin token or a key with the ${PLATFORM_SCOPE} scope. A key with the admin scope administers its own tenant only.`,
  );
}
