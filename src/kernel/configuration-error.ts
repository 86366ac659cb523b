/** A setting that cannot be used as given: raised at start, before anything listens or writes. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}
