// A small RFC 6455 server side: the handshake's accept key and the frame codec of one upgraded socket (text
// messages, fragmented or not, ping/pong, close with its code), within a message size limit. No extensions are
// offered back (permessage-deflate is declined by not answering it), so every frame is plain.
import { createHash } from 'node:crypto'
import type { Duplex } from 'node:stream'

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'

/** Close codes the server sends (RFC 6455, 7.4.1). */
export const CLOSE = {
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003,
  INVALID_PAYLOAD: 1007,
  POLICY_VIOLATION: 1008,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
} as const

/** The largest text message a socket takes by default (a Responses request body's default limit is larger; see Route.maxBytes). */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024

/** Sec-WebSocket-Accept for a client's Sec-WebSocket-Key. */
export function acceptKey (key: string): string {
  return createHash('sha1').update(key + GUID).digest('base64')
}

/** Why an upgrade request is not a WebSocket handshake this server takes, or undefined when it is one. */
export function handshakeProblem (headers: Record<string, string | undefined>): string | undefined {
  if (!/\bwebsocket\b/i.test(headers.upgrade ?? '')) return 'Upgrade must be websocket'
  if (!/\bupgrade\b/i.test(headers.connection ?? '')) return 'Connection must include Upgrade'
  if (headers['sec-websocket-version'] !== '13') return 'Sec-WebSocket-Version must be 13'
  const key = headers['sec-websocket-key'] ?? ''
  if (Buffer.from(key, 'base64').length !== 16) return 'Sec-WebSocket-Key must be 16 bytes in base64'
  return undefined
}

/** The 101 answer to a handshake, with extra headers (names as given). */
export function switchingProtocols (key: string, headers: Record<string, string> = {}): string {
  let head = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n`
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`
  return head + '\r\n'
}

export interface WebSocketOptions {
  /** Largest message (all its fragments) and so largest frame, in bytes; past it the socket closes with 1009. */
  maxMessageBytes?: number
}

export interface ServerWebSocket {
  /** Called with each complete text message, in order. */
  onMessage: (handler: (text: string) => void) => void
  /** Adds a handler called once when the socket has closed, with the close code received or sent (1006: none, the connection dropped). */
  onClose: (handler: (code: number) => void) => void
  /** Sends one text frame; false once the socket is closing or closed. */
  send: (text: string) => boolean
  /** Resolves once what was sent has left the process (at once when nothing waits, or the socket closed). */
  drained: () => Promise<void>
  ping: () => void
  /** Sends a close frame (once) and ends the socket after the peer's answer or shortly after. */
  close: (code: number, reason?: string) => void
  readonly closed: boolean
}

const OP = { CONTINUATION: 0, TEXT: 1, BINARY: 2, CLOSE: 8, PING: 9, PONG: 10 } as const
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** One server frame: FIN set, never masked (servers do not mask, RFC 6455 5.1). */
function frame (opcode: number, payload: Buffer): Buffer {
  const length = payload.length
  const head = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10)
  head[0] = 0x80 | opcode
  if (length < 126) {
    head[1] = length
  } else if (length < 65536) {
    head[1] = 126
    head.writeUInt16BE(length, 2)
  } else {
    head[1] = 127
    head.writeBigUInt64BE(BigInt(length), 2)
  }
  return Buffer.concat([head, payload])
}

function closePayload (code: number, reason: string): Buffer {
  const text = Buffer.from(reason.slice(0, 120))
  const payload = Buffer.alloc(2 + text.length)
  payload.writeUInt16BE(code, 0)
  text.copy(payload, 2)
  return payload
}

/** A received close code a peer may send (RFC 6455 7.4). */
function validCloseCode (code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)
}

/**
 * The codec over an upgraded socket (`head`: bytes already read past the handshake). Client frames must be masked
 * (else 1002), binary messages are refused (1003), text must be UTF-8 (1007), and a frame or message past
 * maxMessageBytes closes the socket (1009) before its payload is buffered.
 */
export function serverWebSocket (socket: Duplex, head: Buffer, options: WebSocketOptions = {}): ServerWebSocket {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
  let buffered: Buffer = head.length > 0 ? Buffer.from(head) : Buffer.alloc(0)
  let fragments: Buffer[] = []
  let fragmentBytes = 0
  let fragmentOpcode = -1
  let closeSent = false
  let closedCode: number | undefined
  let onMessage: (text: string) => void = () => {}
  const onClose: Array<(code: number) => void> = []
  let closeTimer: NodeJS.Timeout | undefined

  const finish = (code: number): void => {
    if (closedCode !== undefined) return
    closedCode = code
    clearTimeout(closeTimer)
    for (const handler of onClose) handler(code)
  }
  const close = (code: number, reason = ''): void => {
    if (closeSent || socket.destroyed) return
    closeSent = true
    socket.write(frame(OP.CLOSE, closePayload(code, reason)))
    socket.end()
    finish(code)
    // A peer that never answers the close frame does not hold the socket.
    closeTimer = setTimeout(() => socket.destroy(), 5000)
    closeTimer.unref()
  }
  const message = (opcode: number, payload: Buffer): void => {
    if (opcode === OP.BINARY) return close(CLOSE.UNSUPPORTED_DATA, 'binary messages are not accepted')
    let text: string
    try {
      text = utf8.decode(payload)
    } catch {
      return close(CLOSE.INVALID_PAYLOAD, 'text is not UTF-8')
    }
    onMessage(text)
  }
  const control = (opcode: number, payload: Buffer): void => {
    if (opcode === OP.PING) {
      if (!closeSent) socket.write(frame(OP.PONG, payload))
    } else if (opcode === OP.CLOSE) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE.NORMAL
      if (payload.length === 1 || (payload.length >= 2 && !validCloseCode(code))) return close(CLOSE.PROTOCOL_ERROR, 'bad close frame')
      close(code === CLOSE.NORMAL || code === CLOSE.GOING_AWAY ? code : CLOSE.NORMAL)
    }
  }
  /** Parses the frames buffered so far; false when the socket was closed by one. */
  const parse = (): void => {
    while (!closeSent && buffered.length >= 2) {
      const fin = (buffered[0] & 0x80) !== 0
      const rsv = buffered[0] & 0x70
      const opcode = buffered[0] & 0x0f
      const masked = (buffered[1] & 0x80) !== 0
      let length = buffered[1] & 0x7f
      let offset = 2
      if (length === 126) {
        if (buffered.length < 4) return
        length = buffered.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (buffered.length < 10) return
        const big = buffered.readBigUInt64BE(2)
        length = big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(big)
        offset = 10
      }
      if (rsv !== 0) return close(CLOSE.PROTOCOL_ERROR, 'no extension was agreed')
      if (!masked) return close(CLOSE.PROTOCOL_ERROR, 'client frames must be masked')
      const isControl = opcode >= 8
      if (isControl && (!fin || length > 125)) return close(CLOSE.PROTOCOL_ERROR, 'bad control frame')
      if (!isControl && opcode !== OP.CONTINUATION && opcode !== OP.TEXT && opcode !== OP.BINARY) return close(CLOSE.PROTOCOL_ERROR, 'unknown opcode')
      if (isControl && opcode !== OP.CLOSE && opcode !== OP.PING && opcode !== OP.PONG) return close(CLOSE.PROTOCOL_ERROR, 'unknown opcode')
      // Refused on the header, before its payload is held.
      if (!isControl && fragmentBytes + length > maxBytes) return close(CLOSE.MESSAGE_TOO_BIG, `messages are limited to ${maxBytes} bytes`)
      if (buffered.length < offset + 4 + length) return
      const mask = buffered.subarray(offset, offset + 4)
      const payload = Buffer.from(buffered.subarray(offset + 4, offset + 4 + length))
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3]
      buffered = buffered.subarray(offset + 4 + length)
      if (isControl) {
        control(opcode, payload)
        continue
      }
      if (opcode === OP.CONTINUATION) {
        if (fragmentOpcode < 0) return close(CLOSE.PROTOCOL_ERROR, 'continuation without a message')
      } else if (fragmentOpcode >= 0) {
        return close(CLOSE.PROTOCOL_ERROR, 'a new message inside a fragmented one')
      } else {
        fragmentOpcode = opcode
      }
      fragments.push(payload)
      fragmentBytes += length
      if (!fin) continue
      const whole = fragments.length === 1 ? fragments[0] : Buffer.concat(fragments)
      const op = fragmentOpcode
      fragments = []
      fragmentBytes = 0
      fragmentOpcode = -1
      message(op, whole)
    }
  }

  socket.on('data', (chunk: Buffer) => {
    if (closeSent) return
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    parse()
  })
  socket.on('error', () => { socket.destroy() })
  socket.on('close', () => { finish(1006) })
  socket.on('end', () => { if (!closeSent) socket.end() })
  queueMicrotask(parse)

  return {
    onMessage: handler => { onMessage = handler },
    onClose: handler => { if (closedCode !== undefined) handler(closedCode); else onClose.push(handler) },
    send (text) {
      if (closeSent || socket.destroyed) return false
      socket.write(frame(OP.TEXT, Buffer.from(text)))
      return true
    },
    async drained () {
      if (!socket.writableNeedDrain || socket.destroyed) return
      await new Promise<void>(resolve => {
        const done = (): void => { socket.off('drain', done); socket.off('close', done); resolve() }
        socket.once('drain', done).once('close', done)
      })
    },
    ping () { if (!closeSent && !socket.destroyed) socket.write(frame(OP.PING, Buffer.alloc(0))) },
    close,
    get closed () { return closeSent || closedCode !== undefined },
  }
}
