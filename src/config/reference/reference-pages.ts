import { renderCliReference } from '../../cli/cli-reference.js';
import { renderConfigurationReference } from './configuration-reference.js';
import { renderEnvironmentReference } from './environment-reference.js';
import { renderParametersReference } from './parameters-reference.js';

/**
 * The reference pages generated from the code, by path from the repository's root. `npm run docs:generate`
 * writes them; test/unit/reference-docs.test.ts renders them again and fails when a committed one differs.
 */
export const REFERENCE_PAGES: ReadonlyArray<{ path: string; render: () => string }> = [
  { path: 'docs/reference/environment.md', render: renderEnvironmentReference },
  { path: 'docs/reference/configuration.md', render: renderConfigurationReference },
  { path: 'docs/reference/cli.md', render: renderCliReference },
  { path: 'docs/reference/parameters.md', render: renderParametersReference },
];
