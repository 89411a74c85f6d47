import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Site } from './site.ts'

/** A private `dcp_` key. Only the SHA-256 of the full key is stored, plus its first 12 characters for display. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  indexes: [{ properties: ['site', 'createdAt'] }],
  properties: {
    id: p.uuid().primary(),
    site: () => p.manyToOne(Site),
    name: p.string().length(200),
    prefix: p.string().length(12),
    hash: p.string().length(64).unique(),
    createdAt: p.datetime(6).defaultRaw('now()'),
    lastUsedAt: p.datetime(6).nullable(),
  },
})
export type IApiKey = InferEntity<typeof ApiKey>
