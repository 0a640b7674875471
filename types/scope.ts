/** Where an entry or asset lives: the effective locale (null when locales are off) and environment. */
export interface Scope {
  locale: string | null
  environment: string
}

/** The environment name used when CMS_ENVIRONMENTS is unset. */
export const DEFAULT_ENVIRONMENT = 'default'
