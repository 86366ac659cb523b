import { Module } from '@nestjs/common';
import { AliasCommand, DeploymentCommand, PriceCommand, ProviderCommand } from './catalog.commands.js';

/** Providers, deployments, prices and aliases: event-sourced aggregates behind CQRS commands. */
@Module({
  providers: [ProviderCommand.Handler, DeploymentCommand.Handler, PriceCommand.Handler, AliasCommand.Handler],
})
export class CatalogModule {}
