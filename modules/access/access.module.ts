import { Module } from '@nestjs/common';
import { KeyIndexProjection } from '../../projections/key-index/key-index.projection.js';
import { ApiKeyCommand, TenantCommand } from './access.commands.js';
import { GatewayAuthenticator } from './gateway-authenticator.js';

/** Tenants and API keys; exports the authenticator the data plane uses. */
@Module({
  providers: [
    TenantCommand.Handler,
    ApiKeyCommand.Handler,
    { provide: GatewayAuthenticator, useFactory: (keys: KeyIndexProjection) => new GatewayAuthenticator(keys), inject: [KeyIndexProjection] },
  ],
  exports: [GatewayAuthenticator],
})
export class AccessModule {}
