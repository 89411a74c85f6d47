import { createSocket } from 'node:dgram'
import ipaddr from 'ipaddr.js'

/**
 * A tiny authoritative DNS server on loopback UDP, answering from a table the test controls (RFC 1035 wire
 * format, written here so the code under test makes a real DNS exchange through node:dns).
 *
 * - A name in the table answers its CNAME, A or AAAA records; asked for A/AAAA, a CNAME is answered and
 *   followed inside the table (as an authoritative server does within its zone).
 * - A name in the table without the asked type answers NOERROR with no answer (NODATA: node says ENODATA).
 * - A name not in the table answers NXDOMAIN (node says ENOTFOUND).
 * - `rcode: 'SERVFAIL'` answers SERVFAIL (node says ESERVFAIL), for temporary failures.
 * Every answer has TTL 0, so no resolver cache keeps an answer the test has changed since.
 */
export interface DnsEntry {
  CNAME?: string
  A?: string[]
  AAAA?: string[]
  rcode?: 'SERVFAIL'
}

export interface DnsQuery { name: string, type: string }

export interface FakeDns {
  /** `127.0.0.1:<port>`, for capture.dnsServers or Resolver#setServers. */
  server: string
  port: number
  /** Every question received, in order. */
  queries: DnsQuery[]
  /** Sets (or with undefined removes) the records of a name. */
  set: (name: string, entry: DnsEntry | undefined) => void
  close: () => Promise<void>
}

const TYPES = { A: 1, CNAME: 5, AAAA: 28 } as const
const TYPE_NAMES: Record<number, string> = { 1: 'A', 5: 'CNAME', 28: 'AAAA' }
const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4 } as const
const CLASS_IN = 1
/** Where the question's name starts in every message: right after the 12-byte header. */
const QUESTION_NAME_POINTER = 0xC00C

export async function startFakeDns(records: Record<string, DnsEntry> = {}): Promise<FakeDns> {
  const table = new Map(Object.entries(records).map(([name, entry]) => [normalise(name), entry]))
  const queries: DnsQuery[] = []
  const socket = createSocket('udp4')
  socket.on('message', (message, remote) => {
    const response = answer(message, table, queries)
    if (response) socket.send(response, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  const { port } = socket.address()
  return {
    server: `127.0.0.1:${port}`,
    port,
    queries,
    set: (name, entry) => void (entry ? table.set(normalise(name), entry) : table.delete(normalise(name))),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  }
}

function answer(message: Buffer, table: Map<string, DnsEntry>, queries: DnsQuery[]): Buffer | undefined {
  if (message.length < 12) return undefined
  const id = message.readUInt16BE(0)
  const flags = message.readUInt16BE(2)
  if (flags & 0x8000) return undefined // a response, not a query
  const questionCount = message.readUInt16BE(4)
  const opcode = (flags >> 11) & 0xF
  let question: { name: string, type: number, end: number }
  try {
    if (questionCount !== 1) throw new Error('one question per query')
    const { name, end } = readName(message, 12)
    question = { name, type: message.readUInt16BE(end), end: end + 4 }
  }
  catch {
    return header(id, flags, RCODE.FORMERR, 0, 0)
  }
  const rawQuestion = message.subarray(12, question.end)
  if (opcode !== 0) return Buffer.concat([header(id, flags, RCODE.NOTIMP, 1, 0), rawQuestion])
  queries.push({ name: question.name, type: TYPE_NAMES[question.type] ?? String(question.type) })

  const entry = table.get(normalise(question.name))
  if (!entry) return Buffer.concat([header(id, flags, RCODE.NXDOMAIN, 1, 0), rawQuestion])
  if (entry.rcode === 'SERVFAIL') return Buffer.concat([header(id, flags, RCODE.SERVFAIL, 1, 0), rawQuestion])

  const answers: Buffer[] = []
  let owner: Buffer = u16(QUESTION_NAME_POINTER)
  let current: DnsEntry | undefined = entry
  const seen = new Set<string>()
  // A CNAME answers any question; for A/AAAA it is followed inside the table; a CNAME question gets the one record.
  while (current && answers.length < 8) {
    if (current.CNAME) {
      const target = encodeName(current.CNAME)
      answers.push(record(owner, TYPES.CNAME, target))
      if (question.type === TYPES.CNAME || seen.has(normalise(current.CNAME))) break
      seen.add(normalise(current.CNAME))
      owner = target
      current = table.get(normalise(current.CNAME))
      continue
    }
    if (question.type === TYPES.A) for (const ip of current.A ?? []) answers.push(record(owner, TYPES.A, Buffer.from(ipaddr.IPv4.parse(ip).toByteArray())))
    if (question.type === TYPES.AAAA) for (const ip of current.AAAA ?? []) answers.push(record(owner, TYPES.AAAA, Buffer.from(ipaddr.IPv6.parse(ip).toByteArray())))
    break
  }
  return Buffer.concat([header(id, flags, RCODE.NOERROR, 1, answers.length), rawQuestion, ...answers])
}

/** Response header: QR and AA set, opcode and RD copied from the query, RA set. */
function header(id: number, queryFlags: number, rcode: number, questions: number, answers: number): Buffer {
  const flags = 0x8000 | (queryFlags & 0x7800) | 0x0400 | (queryFlags & 0x0100) | 0x0080 | rcode
  const buffer = Buffer.alloc(12)
  buffer.writeUInt16BE(id, 0)
  buffer.writeUInt16BE(flags, 2)
  buffer.writeUInt16BE(questions, 4)
  buffer.writeUInt16BE(answers, 6)
  return buffer // NSCOUNT and ARCOUNT stay 0
}

function record(owner: Buffer, type: number, data: Buffer): Buffer {
  const fixed = Buffer.alloc(10)
  fixed.writeUInt16BE(type, 0)
  fixed.writeUInt16BE(CLASS_IN, 2)
  fixed.writeUInt32BE(0, 4) // TTL 0: never cached
  fixed.writeUInt16BE(data.length, 8)
  return Buffer.concat([owner, fixed, data])
}

/** Reads a (possibly compressed) name at `offset`; `end` is just past it in the message. */
function readName(message: Buffer, offset: number): { name: string, end: number } {
  const labels: string[] = []
  let position = offset
  let end: number | undefined
  for (let jumps = 0; jumps < 32; jumps++) {
    const length = message.readUInt8(position)
    if (length === 0) return { name: labels.join('.'), end: end ?? position + 1 }
    if ((length & 0xC0) === 0xC0) {
      end ??= position + 2
      position = message.readUInt16BE(position) & 0x3FFF
      continue
    }
    if (length > 63 || position + 1 + length > message.length) throw new Error('bad label')
    labels.push(message.toString('latin1', position + 1, position + 1 + length))
    position += 1 + length
  }
  throw new Error('compression loop')
}

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean)
  return Buffer.concat([...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'latin1')])), Buffer.from([0])])
}

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2)
  buffer.writeUInt16BE(value, 0)
  return buffer
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/\.$/, '')
}
