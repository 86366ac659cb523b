import { ConfigurationError } from './configuration-error.js';
import type { SettingDeclaration } from './setting-declaration.js';

/**
 * Helpers for the settings files of each context (`*-settings.ts`), which read their own environment
 * variables. A knob's default lives in its context's defaults object, so readers here return
 * `undefined` for an unset variable instead of a default of their own.
 */
/** SWITCHYARD_DATA_DIR when unset: where PGlite keeps the log and `file:` secrets are looked for. */
export const DEFAULT_DATA_DIR = '.switchyard';

export type SettingsEnv = Readonly<Record<string, string | undefined>>;

/** The one way settings code reads a variable: through its declaration, so every variable read is declared. */
export function textSetting(env: SettingsEnv, setting: SettingDeclaration): string | undefined {
  return env[setting.name];
}

/** A non-negative integer, or undefined when unset (empty counts as unset). */
export function integerSetting(env: SettingsEnv, setting: SettingDeclaration): number | undefined {
  const { name } = setting;
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new ConfigurationError(`${name} must be a non-negative integer`);
  return parsed;
}

/** A positive integer, or undefined when unset. */
export function positiveIntegerSetting(env: SettingsEnv, setting: SettingDeclaration): number | undefined {
  const value = integerSetting(env, setting);
  if (value === 0) throw new ConfigurationError(`${setting.name} must be a positive integer`);
  return value;
}

/** Drops undefined members (and empty nested objects), so spreading the result over defaults keeps them. */
export function definedOnly<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    if (member && typeof member === 'object' && Object.keys(member).length === 0) continue;
    out[key] = member;
  }
  return out as T;
}
