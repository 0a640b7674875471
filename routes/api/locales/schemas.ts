import { Type } from '@sinclair/typebox'

/** interface.md "Locales". */
export const LocalesReply = Type.Object({
  locales: Type.Array(Type.String(), { description: 'CMS_LOCALES in order; empty when locales are off' }),
  default: Type.Union([Type.String(), Type.Null()], { description: 'The first locale, or null' })
}, { additionalProperties: false })

export const localesSchema = {
  tags: ['discovery'],
  summary: 'List the configured locales',
  response: { 200: LocalesReply }
}
