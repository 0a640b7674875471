import { DEFAULT_ENVIRONMENT, type Scope } from '../types/scope.js'

/**
 * The effective locale and environment of a request (interface.md common parameters):
 * a missing or unknown value selects the first configured one.
 */
export function resolveScope (
  locales: readonly string[],
  environments: readonly string[],
  locale: unknown,
  environment: unknown
): Scope {
  const pick = (options: readonly string[], value: unknown): string | undefined =>
    typeof value === 'string' && options.includes(value) ? value : options[0]
  return {
    locale: locales.length === 0 ? null : (pick(locales, locale) ?? null),
    environment: environments.length === 0 ? DEFAULT_ENVIRONMENT : (pick(environments, environment) ?? DEFAULT_ENVIRONMENT)
  }
}
