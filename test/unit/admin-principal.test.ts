import { AdminApiError } from '../../modules/admin/admin-error.js';
import { AdminPrincipal } from '../../modules/admin/admin-principal.js';

/** The reach of each admin principal (issue 32, item 7); test/e2e/tenant-admin-scope.test.ts runs it on every route. */
describe('AdminPrincipal', () => {
  const platform = AdminPrincipal.platform('admin:env');
  const tenant = AdminPrincipal.tenant('key:acme-admin', 'acme', { scopes: ['admin', 'inference'], aliases: null });
  const narrow = AdminPrincipal.tenant('key:acme-narrow', 'acme', { scopes: ['admin', 'inference'], aliases: ['solo'] });

  const refusal = (work: () => unknown): { status: number; code: string } | null => {
    try {
      work();
      return null;
    } catch (error) {
      if (!(error instanceof AdminApiError)) throw error;
      return { status: error.status, code: error.code };
    }
  };

  test('the platform reaches every tenant, and a read it does not filter stays unfiltered', () => {
    expect(platform.isPlatform).toBe(true);
    expect(platform.reaches('globex')).toBe(true);
    expect(platform.confine(undefined)).toBeNull();
    expect(platform.confine('globex')).toBe('globex');
    expect(refusal(() => platform.requirePlatform())).toBeNull();
  });

  test('a tenant admin reaches its own tenant; any other is the 404 of a tenant that does not exist', () => {
    expect(tenant.isPlatform).toBe(false);
    expect(tenant.reaches('acme')).toBe(true);
    expect(tenant.reaches('globex')).toBe(false);
    expect(tenant.confine(undefined)).toBe('acme');
    expect(tenant.confine('acme')).toBe('acme');
    expect(refusal(() => tenant.confine('globex'))).toEqual({ status: 404, code: 'tenant_not_found' });
    expect(refusal(() => tenant.requireTenant('globex'))).toEqual({ status: 404, code: 'tenant_not_found' });
    expect(refusal(() => tenant.requirePlatform())).toEqual({ status: 403, code: 'platform_scope_required' });
  });

  test('a tenant admin grants only scopes and aliases it holds; the platform grants anything', () => {
    expect(platform.grantExcess(['admin:platform'], [])).toBeNull();
    expect(tenant.grantExcess(['inference'], [])).toBeNull();
    expect(tenant.grantExcess(['admin', 'inference'], ['chat'])).toBeNull();
    expect(tenant.grantExcess(['admin:platform'], [])).toContain("'admin:platform'");
    expect(tenant.grantExcess(['inference', 'models:read', 'usage:read'], [])).toBe("scopes 'models:read', 'usage:read'");
    // Limited to some aliases: never "every alias" (an empty list), never another alias.
    expect(narrow.grantExcess(['inference'], ['solo'])).toBeNull();
    expect(narrow.grantExcess(['inference'], [])).toContain('every alias');
    expect(narrow.grantExcess(['inference'], ['solo', 'chat'])).toBe("alias 'chat'");
    expect(narrow.grantExcess(['usage:read'], ['chat', 'x'])).toBe("scope 'usage:read' and aliases 'chat', 'x'");
  });

  test('what a principal holds cannot be changed through what it was built from', () => {
    const scopes: Array<'admin' | 'inference'> = ['admin'];
    const built = AdminPrincipal.tenant('key:k', 'acme', { scopes, aliases: null });
    scopes.push('inference');
    expect(built.grantExcess(['inference'], [])).toBe("scope 'inference'");
  });
});
