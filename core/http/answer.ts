import { FastResponse } from 'srvx'

declare module 'h3' {
  interface H3EventContext {
    /**
     * Headers every answer to this request carries, error answers included: a capture route's CORS headers, so the
     * browser lets the script read why a request failed.
     */
    answerHeaders?: readonly (readonly [string, string])[]
  }
}

const JSON_TYPE = ['content-type', 'application/json;charset=UTF-8'] as const

/**
 * A JSON answer with its headers as a plain list, handed to the socket as is. Setting headers on `event.res` makes
 * h3 build and merge a Headers object per answer, which showed in the /collect profile; this is for hot routes.
 */
export function fastJson(status: number, body: unknown, headers: readonly (readonly [string, string])[] = []): Response {
  return fastJsonText(status, JSON.stringify(body), headers)
}

/** fastJson for a body already serialised (an answer a hot route has only a few of, made once). */
export function fastJsonText(status: number, json: string, headers: readonly (readonly [string, string])[] = []): Response {
  return new FastResponse(json, { status, headers: [JSON_TYPE, ...headers] as [string, string][] })
}
