import { aliasStream, deploymentStream, priceStream, providerStream } from '../../events/index.js';
import { deciderCommand } from '../../src/kernel/index.js';
import { aliasDecider } from './alias/alias.decider.js';
import { deploymentDecider } from './deployment/deployment.decider.js';
import { priceDecider } from './price/price.decider.js';
import { providerDecider } from './provider/provider.decider.js';

/** The catalog's CQRS commands: one message type per aggregate, dispatched through the CommandBus. */
export const ProviderCommand = deciderCommand('Provider', providerDecider, (c) => providerStream(c.providerId));
export const DeploymentCommand = deciderCommand('Deployment', deploymentDecider, (c) => deploymentStream(c.deploymentId));
export const PriceCommand = deciderCommand('Price', priceDecider, (c) => priceStream(c.deploymentId));
export const AliasCommand = deciderCommand('Alias', aliasDecider, (c) => aliasStream(c.alias));
