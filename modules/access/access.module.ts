import { Global, Module } from '@nestjs/common';
import { AdminKeyVerifier } from '../admin/index.js';
import { KeyIndexProjection } from '../../projections/key-index/index.js';
import { ApiKeyCommand, ContentPolicyCommand, TenantCommand } from './access.commands.js';
import { GatewayAuthenticator } from './gateway-authenticator.js';

/**
 * Tenants and API keys; exports the authenticator the data plane uses. Global, because it also answers
 * the admin context's AdminKeyVerifier port wherever an admin guard runs.
 */
@Global()
@Module({
  providers: [
    TenantCommand.Handler,
    ApiKeyCommand.Handler,
    ContentPolicyCommand.Handler,
    { provide: GatewayAuthenticator, useFactory: (keys: KeyIndexProjection) => new GatewayAuthenticator(keys), inject: [KeyIndexProjection] },
    { provide: AdminKeyVerifier, useExisting: GatewayAuthenticator },
  ],
  exports: [GatewayAuthenticator, AdminKeyVerifier],
})
export class AccessModule {}
