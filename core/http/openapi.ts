import { toJsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import type { RouteDefinition } from './routes.ts'

type AnyRoute = RouteDefinition<unknown, unknown, unknown>
type JsonObject = Record<string, unknown>

const SECURITY: Record<string, JsonObject[] | undefined> = {
  key: [{ privateKey: [] }],
  admin: [{ adminToken: [] }],
  none: [],
}

/** Builds the OpenAPI 3.1 document from the route table; every route joins it by being declared. */
export function createOpenApiDocument(routes: readonly AnyRoute[], info: { version: string, serverUrl: string }): JsonObject {
  const paths: Record<string, JsonObject> = {}
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    paths[path] ??= {}
    paths[path][route.method.toLowerCase()] = toOperation(route)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'dcgate API',
      version: info.version,
      description: 'Conversion tracking, data export and data deletion. Private routes take a `dcp_` key in `x-dc-key`.',
    },
    servers: [{ url: info.serverUrl }],
    tags: orderTags(routes),
    components: {
      securitySchemes: {
        privateKey: { type: 'apiKey', in: 'header', name: 'x-dc-key', description: 'A private `dcp_` key of the website.' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (DCGATE_ADMIN_TOKEN or <dataDir>/admin-token); loopback only by default.' },
      },
    },
    paths,
  }
}

/** Tags in declaration order, with the operator-only Admin group last so integrators see their routes first. */
function orderTags(routes: readonly AnyRoute[]): JsonObject[] {
  const names = [...new Set(routes.flatMap((r) => r.tags ?? []))]
  return [...names.filter((n) => n !== 'Admin'), ...names.filter((n) => n === 'Admin')].map((name) => ({ name }))
}

function toOperation(route: AnyRoute): JsonObject {
  const operation: JsonObject = {
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    security: SECURITY[route.auth],
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
    responses: responses(route),
  }
  if (route.body) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: schema(route.body) } } }
  }
  return operation
}

function parameters(part: v.GenericSchema | undefined, location: 'path' | 'query'): JsonObject[] {
  if (!part) return []
  const object = schema(part) as { properties?: Record<string, JsonObject>, required?: string[] }
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (object.required ?? []).includes(name),
    description: property.description,
    schema: property,
  }))
}

function responses(route: AnyRoute): JsonObject {
  const result: JsonObject = {}
  for (const [status, entry] of Object.entries(route.responses ?? {})) {
    const described = 'description' in entry && !('kind' in entry) ? entry as { description: string, schema?: v.GenericSchema } : { description: 'OK', schema: entry as v.GenericSchema }
    result[status] = described.schema
      ? { description: described.description, content: { 'application/json': { schema: schema(described.schema) } } }
      : { description: described.description }
  }
  if (route.auth === 'key') {
    result['401'] ??= errorResponse('Missing x-dc-key header, or an invalid or deleted key')
    result['500'] ??= errorResponse('API key validation failed (temporary; retry)')
  }
  if (route.auth === 'admin') result['401'] ??= errorResponse('Missing or wrong admin token')
  if (route.body || route.query || route.params) result['400'] ??= errorResponse('Invalid input; the message names the field')
  if (!Object.keys(result).some((status) => status.startsWith('2'))) result['200'] = { description: 'OK' }
  return result
}

function errorResponse(description: string): JsonObject {
  return { description, content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } } } }
}

function schema(part: v.GenericSchema): JsonObject {
  return toJsonSchema(part, { target: 'draft-2020-12', errorMode: 'ignore' }) as JsonObject
}
