// The server-side event classes of facebook-nodejs-business-sdk the Meta suite round-trips requests through; the
// package ships no types. Their setters are looked up by name (set + the field in PascalCase), so they are loose here.
declare module 'facebook-nodejs-business-sdk' {
  interface ServerSideObject {
    normalize(): Record<string, unknown>
  }
  type ServerSideClass = new () => ServerSideObject
  export const ServerEvent: ServerSideClass
  export const UserData: ServerSideClass
  export const CustomData: ServerSideClass
  export const Content: ServerSideClass
}
