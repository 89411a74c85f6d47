/**
 * A value as TypeScript source for dcgate.config.ts (`dcgate sites export`): an object literal with unquoted keys
 * where they are identifiers, single-quoted strings, two-space indents.
 */
export function configLiteral(value: unknown, indent = ''): string {
  if (typeof value === 'string') return quote(value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    return `[\n${value.map((item) => `${inner}${configLiteral(item, inner)},`).join('\n')}\n${indent}]`
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined)
    if (entries.length === 0) return '{}'
    return `{\n${entries.map(([key, item]) => `${inner}${/^[A-Za-z_$][\w$]*$/.test(key) ? key : quote(key)}: ${configLiteral(item, inner)},`).join('\n')}\n${indent}}`
  }
  return 'undefined'
}

function quote(text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, '\\\'')
  return `'${escaped}'`
}
