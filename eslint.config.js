import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import layerBoundaries from './eslint-rules/layer-boundaries.js';

const root = path.dirname(fileURLToPath(import.meta.url));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/k6-chat.js', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      // Nest providers are often classes with only a constructor (DI) or decorators.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },
  {
    // Kernel / modules / projections import direction and public surfaces (DESIGN §3, README "Layout").
    files: ['src/kernel/**/*.ts', 'modules/**/*.ts', 'projections/**/*.ts', 'events/**/*.ts'],
    plugins: { switchyard: { rules: { 'layer-boundaries': layerBoundaries } } },
    rules: { 'switchyard/layer-boundaries': ['error', { root }] },
  },
);
