/**
 * One environment variable a context reads, declared where it is read. The reading code reads through
 * the declaration (`textSetting(env, SETTING)`, `integerSetting(env, SETTING)`), and the reference page
 * `docs/reference/environment.md` is rendered from the same declarations, so neither can name a variable
 * the other does not know.
 */
export interface SettingDeclaration<Name extends string = string> {
  /** The environment variable. */
  readonly name: Name;
  /** What a value looks like, as the reader accepts it (e.g. `integer ≥ 0 (ms)`, `on | off`). */
  readonly type: string;
  /** What applies when the variable is unset, in the reference's words; built from the default constant where one exists. */
  readonly default: string;
  /** What it changes, for an operator. */
  readonly meaning: string;
  /** Where the concept that reads it lives (`modules/cache`, `src/kernel/event-store/spool`, …). */
  readonly owner: string;
}

/** A declaration as a settings file writes it: the name and owner come from the surrounding call. */
export type SettingSpec = Omit<SettingDeclaration, 'name' | 'owner'>;

/** The declarations of one concept, keyed by variable name, so a reader that misspells one does not compile. */
export type SettingDeclarations<Names extends string> = { readonly [Name in Names]: SettingDeclaration<Name> };

/** Declares one concept's settings, in the order its reference table lists them. */
export function declareSettings<const Names extends string>(owner: string, specs: { readonly [Name in Names]: SettingSpec }): SettingDeclarations<Names> {
  const declared: Record<string, SettingDeclaration> = {};
  for (const [name, spec] of Object.entries(specs) as Array<[Names, SettingSpec]>) {
    declared[name] = Object.freeze({ name, owner, ...spec });
  }
  return Object.freeze(declared) as SettingDeclarations<Names>;
}

/** A concept's declarations as a list, in declaration order (for a registry of every setting). */
export function settingList(declarations: Readonly<Record<string, SettingDeclaration>>): readonly SettingDeclaration[] {
  return Object.values(declarations);
}

/** A value as the reference shows it: Markdown inline code (`value`). */
export function inlineCode(value: string | number): string {
  return `\`${value}\``;
}
