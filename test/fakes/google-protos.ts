/**
 * Google's own message types as the oracle for every Data Manager API body: the protos that ship with the official
 * Node client `@google-ads/datamanager` (a dev dependency, loaded by tests and the fake only, never by dcgate at run
 * time), read with the proto3 JSON mapping the client's REST transport uses (google-gax's `serializer`, the
 * `proto3-json-serializer` package). A body whose round trip through a type changes it holds a field, or an enum
 * value, that Google's types do not know.
 */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
// The client's own runtime (google-gax), which brings protobufjs and the proto3 JSON serializer.
const gax = require('google-gax') as typeof import('google-gax')
const root = gax.protobuf.Root.fromJSON(require('@google-ads/datamanager/build/protos/protos.json'))

/** The client's version, for messages and the README. */
export const DATA_MANAGER_CLIENT_VERSION: string = require('@google-ads/datamanager/package.json').version

export type DataManagerMessage = 'IngestEventsRequest' | 'IngestEventsResponse' | 'RetrieveRequestStatusRequest' | 'RetrieveRequestStatusResponse'

function typeOf(name: string) {
  return root.lookupType(`google.ads.datamanager.v1.${name}`)
}

/** The body as the official types read and write it back (proto3 JSON). */
export function roundTrip(message: DataManagerMessage, json: unknown): unknown {
  const type = typeOf(message)
  return gax.serializer.toProto3JSON(gax.serializer.fromProto3JSON(type, json as never) as never)
}

export interface UnknownField { field: string, description: string }

/**
 * Every key the type has no field for and every enum value it has no name for, with its JSON path
 * (`events[0].adIdentifiers`), as Google's JSON parser refuses them. Well-known types (Timestamp…) are not walked.
 */
export function unknownToGoogle(message: DataManagerMessage, json: unknown): UnknownField[] {
  return walk(typeOf(message), json, '')
}

type ProtoType = ReturnType<typeof typeOf>

function walk(type: ProtoType, json: unknown, at: string): UnknownField[] {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return []
  return Object.entries(json).flatMap(([key, value]) => {
    const field = type.fields[key]
    const path = at ? `${at}.${key}` : key
    if (!field) return [{ field: at, description: `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.` }]
    field.resolve()
    const values = field.repeated && Array.isArray(value) ? value.map((v, i) => [v, `${path}[${i}]`] as const) : [[value, path] as const]
    return values.flatMap(([item, itemPath]) => {
      const resolved = field.resolvedType
      if (resolved instanceof gax.protobuf.Enum) {
        return typeof item === 'string' && !(item in resolved.values)
          ? [{ field: itemPath, description: `Invalid value at '${itemPath}' (type.googleapis.com/${resolved.fullName.slice(1)}), "${item}"` }]
          : []
      }
      if (resolved instanceof gax.protobuf.Type && !resolved.fullName.startsWith('.google.protobuf.')) return walk(resolved, item, itemPath)
      return []
    })
  })
}
