// TEST DOUBLE: a MongoDB wire-protocol stand-in, NOT a database. Used only by tests, never by lib/ or gateway/.
//
// No MongoDB server can be installed on the build machines, so the MongoDB adapter is also tested
// against this: a `net` server speaking enough of the wire protocol (OP_MSG, plus OP_QUERY/OP_REPLY for
// the driver's first handshake) for the official driver. Query, projection, sort, update and aggregation
// semantics come from `mingo`; values are the driver's own `bson` types. Unique indexes are enforced
// (E11000, code 11000); TTL indexes are recorded but never delete anything. Every command runs to
// completion before the next one starts, so single-document operations are atomic as in MongoDB.
// Commands and options it does not handle are answered with an error that names them.
import { createServer } from 'node:net'
import type { Socket } from 'node:net'
import { BSON, EJSON, Long, ObjectId } from 'bson'
import { aggregate, find, update as applyUpdateOperators } from 'mingo'

export interface MongoStandIn {
  /** mongodb://127.0.0.1:<port> */
  url: string
  close (): Promise<void>
}

type Doc = Record<string, any>

interface IndexSpec {
  name: string
  key: Record<string, number>
  unique: boolean
  expireAfterSeconds?: number
}

interface Collection {
  docs: Doc[]
  indexes: IndexSpec[]
}

interface OpenCursor {
  ns: string
  docs: Doc[]
}

const OP_REPLY = 1
const OP_QUERY = 2004
const OP_MSG = 2013
const MSG_CHECKSUM_PRESENT = 1
const MSG_MORE_TO_COME = 2
const MAX_MESSAGE_BYTES = 48_000_000
const DEFAULT_BATCH = 101
const ID_INDEX: IndexSpec = { name: '_id_', key: { _id: 1 }, unique: true }
const INDEX_OPTIONS = new Set(['key', 'name', 'unique', 'expireAfterSeconds', 'background', 'v'])
const FIND_OPTIONS_REFUSED = ['collation', 'min', 'max', 'returnKey', 'showRecordId', 'tailable', 'awaitData', 'let']
const PIPELINE_UPDATE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith'])

class CommandFailure extends Error {
  code: number
  codeName: string
  extra: Doc

  constructor (code: number, codeName: string, message: string, extra: Doc = {}) {
    super(message)
    this.code = code
    this.codeName = codeName
    this.extra = extra
  }
}

function unsupported (what: string): CommandFailure {
  return new CommandFailure(115, 'CommandNotSupported', `${what} is not supported by the MongoDB stand-in (a test double)`)
}

/** A deep copy that keeps bson types (ObjectId, Date, Long...). */
function copyDoc (doc: Doc): Doc {
  return BSON.deserialize(BSON.serialize(doc))
}

function sameDoc (a: Doc, b: Doc): boolean {
  return Buffer.from(BSON.serialize(a)).equals(Buffer.from(BSON.serialize(b)))
}

function valueAt (doc: Doc, path: string): unknown {
  let value: unknown = doc
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return null
    value = (value as Doc)[part]
  }
  return value ?? null
}

function isOperatorObject (value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  if (Object.getPrototypeOf(value) !== Object.prototype) return false
  const keys = Object.keys(value)
  return keys.length > 0 && keys[0].startsWith('$')
}

export async function startMongoStandIn (): Promise<MongoStandIn> {
  const databases = new Map<string, Map<string, Collection>>()
  const cursors = new Map<number, OpenCursor>()
  const sockets = new Set<Socket>()
  let nextCursorId = 1
  let nextConnectionId = 1
  let nextReplyId = 1

  function collectionOf (db: string, name: string, create: boolean): Collection | undefined {
    let collections = databases.get(db)
    if (collections === undefined) {
      if (!create) return undefined
      collections = new Map()
      databases.set(db, collections)
    }
    let coll = collections.get(name)
    if (coll === undefined && create) {
      coll = { docs: [], indexes: [ID_INDEX] }
      collections.set(name, coll)
    }
    return coll
  }

  function collectionName (body: Doc, command: string): string {
    const name = body[command]
    if (typeof name !== 'string' || name === '') throw new CommandFailure(73, 'InvalidNamespace', `${command} needs a collection name`)
    return name
  }

  function indexKey (doc: Doc, index: IndexSpec): string {
    return EJSON.stringify(Object.keys(index.key).map(path => valueAt(doc, path)), { relaxed: false })
  }

  function duplicateKey (db: string, collName: string, index: IndexSpec, doc: Doc): CommandFailure {
    const keyValue: Doc = {}
    for (const path of Object.keys(index.key)) keyValue[path] = valueAt(doc, path)
    const shown = Object.entries(keyValue).map(([k, v]) => `${k}: ${EJSON.stringify(v)}`).join(', ')
    return new CommandFailure(11000, 'DuplicateKey',
      `E11000 duplicate key error collection: ${db}.${collName} index: ${index.name} dup key: { ${shown} }`,
      { keyPattern: { ...index.key }, keyValue })
  }

  /** Throws E11000 when `doc` clashes with another document (other than `replacing`) on a unique index. */
  function checkUnique (db: string, collName: string, coll: Collection, doc: Doc, replacing?: Doc): void {
    for (const index of coll.indexes) {
      if (!index.unique) continue
      const key = indexKey(doc, index)
      for (const other of coll.docs) {
        if (other !== replacing && indexKey(other, index) === key) throw duplicateKey(db, collName, index, doc)
      }
    }
  }

  function applyUpdate (current: Doc, update: unknown, arrayFilters: Doc[] | undefined): Doc {
    if (Array.isArray(update)) {
      for (const stage of update as Doc[]) {
        const name = Object.keys(stage)[0]
        if (!PIPELINE_UPDATE_STAGES.has(name)) throw new CommandFailure(72, 'InvalidOptions', `${name} is not allowed in an update pipeline`)
      }
      const [result] = aggregate([copyDoc(current)], update as Doc[])
      return result as Doc
    }
    if (update === null || typeof update !== 'object') throw new CommandFailure(9, 'FailedToParse', 'update must be a document or a pipeline')
    const keys = Object.keys(update)
    const operators = keys.filter(k => k.startsWith('$'))
    if (operators.length > 0 && operators.length !== keys.length) {
      throw new CommandFailure(9, 'FailedToParse', 'an update mixes operators and plain fields')
    }
    if (operators.length === 0) {
      const replacement = update as Doc
      if (replacement._id !== undefined && current._id !== undefined && !sameDoc({ v: replacement._id }, { v: current._id })) {
        throw new CommandFailure(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
      }
      return current._id === undefined ? { ...replacement } : { _id: current._id, ...replacement }
    }
    const next = copyDoc(current)
    applyUpdateOperators(next, update as Doc, arrayFilters, undefined, { cloneMode: 'none' })
    return next
  }

  /** The document an upsert starts from: the query's equality fields. */
  function upsertBase (query: Doc): Doc {
    const base: Doc = {}
    for (const [key, value] of Object.entries(query)) {
      if (key.startsWith('$') || isOperatorObject(value) || value instanceof RegExp) continue
      if (key.includes('.')) applyUpdateOperators(base, { $set: { [key]: value } }, undefined, undefined, { cloneMode: 'none' })
      else base[key] = value
    }
    return base
  }

  function withId (doc: Doc): Doc {
    return doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc
  }

  function replaceDoc (coll: Collection, old: Doc, next: Doc): void {
    coll.docs[coll.docs.indexOf(old)] = next
  }

  function updatedDoc (db: string, collName: string, coll: Collection, old: Doc, update: unknown, arrayFilters?: Doc[]): Doc {
    const next = applyUpdate(old, update, arrayFilters)
    if (!sameDoc({ v: next._id }, { v: old._id })) {
      throw new CommandFailure(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
    }
    checkUnique(db, collName, coll, next, old)
    return next
  }

  function insertedDoc (db: string, collName: string, coll: Collection, doc: Doc): Doc {
    const next = withId(doc)
    checkUnique(db, collName, coll, next)
    coll.docs.push(next)
    return next
  }

  function matching (coll: Collection | undefined, filter: unknown, sort?: unknown): Doc[] {
    const cursor = find(coll?.docs ?? [], (filter ?? {}) as Doc)
    if (sort !== undefined && sort !== null && Object.keys(sort).length > 0) cursor.sort(sort as Record<string, 1 | -1>)
    return cursor.all() as Doc[]
  }

  function project (docs: Doc[], projection: unknown): Doc[] {
    if (projection === undefined || projection === null || Object.keys(projection).length === 0) return docs
    return find(docs, {}, projection as Doc).all() as Doc[]
  }

  function writeError (index: number, err: unknown): Doc {
    if (err instanceof CommandFailure) return { index, code: err.code, errmsg: err.message, ...err.extra }
    throw err
  }

  function cursorReply (ns: string, docs: Doc[], batchSize: unknown, singleBatch: boolean, field: 'firstBatch' | 'nextBatch', existingId = 0): Doc {
    const size = typeof batchSize === 'number' && batchSize > 0 ? batchSize : (field === 'firstBatch' ? DEFAULT_BATCH : docs.length)
    const batch = docs.slice(0, size)
    const rest = docs.slice(size)
    let id = 0
    if (rest.length > 0 && !singleBatch) {
      id = existingId === 0 ? nextCursorId++ : existingId
      cursors.set(id, { ns, docs: rest })
    } else if (existingId !== 0) {
      cursors.delete(existingId)
    }
    return { cursor: { id: Long.fromNumber(id), ns, [field]: batch }, ok: 1 }
  }

  const commands: Record<string, (body: Doc, db: string, connectionId: number) => Doc> = {
    hello: (_body, _db, connectionId) => ({
      helloOk: true,
      isWritablePrimary: true,
      ismaster: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: MAX_MESSAGE_BYTES,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1,
    }),
    buildInfo: () => ({ version: '7.0.0-standin', versionArray: [7, 0, 0, 0], ok: 1 }),
    ping: () => ({ ok: 1 }),
    endSessions: () => ({ ok: 1 }),

    insert: (body, db) => {
      const collName = collectionName(body, 'insert')
      const coll = collectionOf(db, collName, true)!
      const documents: Doc[] = body.documents ?? []
      const ordered = body.ordered !== false
      const writeErrors: Doc[] = []
      let n = 0
      for (const [index, doc] of documents.entries()) {
        try {
          insertedDoc(db, collName, coll, doc)
          n++
        } catch (err) {
          writeErrors.push(writeError(index, err))
          if (ordered) break
        }
      }
      return writeErrors.length > 0 ? { n, writeErrors, ok: 1 } : { n, ok: 1 }
    },

    find: (body, db) => {
      const collName = collectionName(body, 'find')
      for (const option of FIND_OPTIONS_REFUSED) {
        if (body[option] !== undefined) throw unsupported(`the find option '${option}'`)
      }
      let docs = matching(collectionOf(db, collName, false), body.filter, body.sort)
      const skip = typeof body.skip === 'number' ? body.skip : 0
      docs = docs.slice(skip)
      if (typeof body.limit === 'number' && body.limit > 0) docs = docs.slice(0, body.limit)
      return cursorReply(`${db}.${collName}`, project(docs, body.projection), body.batchSize, body.singleBatch === true, 'firstBatch')
    },

    getMore: (body) => {
      const id = Number(body.getMore)
      const open = cursors.get(id)
      if (open === undefined) throw new CommandFailure(43, 'CursorNotFound', `cursor id ${id} not found`)
      return cursorReply(open.ns, open.docs, body.batchSize, false, 'nextBatch', id)
    },

    killCursors: (body) => {
      const killed: Long[] = []
      const notFound: Long[] = []
      for (const raw of body.cursors ?? []) {
        const id = Number(raw)
        ;(cursors.delete(id) ? killed : notFound).push(Long.fromNumber(id))
      }
      return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 }
    },

    update: (body, db) => {
      const collName = collectionName(body, 'update')
      const coll = collectionOf(db, collName, true)!
      const ordered = body.ordered !== false
      const writeErrors: Doc[] = []
      const upserted: Doc[] = []
      let n = 0
      let nModified = 0
      for (const [index, statement] of (body.updates as Doc[] ?? []).entries()) {
        try {
          for (const option of ['collation', 'hint', 'sort']) {
            if (statement[option] !== undefined) throw unsupported(`the update option '${option}'`)
          }
          const found = matching(coll, statement.q)
          const targets = statement.multi === true ? found : found.slice(0, 1)
          if (targets.length === 0 && statement.upsert === true) {
            const base = upsertBase(statement.q ?? {})
            const inserted = insertedDoc(db, collName, coll, applyUpdate(base, statement.u, statement.arrayFilters))
            upserted.push({ index, _id: inserted._id })
            n++
            continue
          }
          for (const old of targets) {
            const next = updatedDoc(db, collName, coll, old, statement.u, statement.arrayFilters)
            n++
            if (!sameDoc(old, next)) {
              replaceDoc(coll, old, next)
              nModified++
            }
          }
        } catch (err) {
          writeErrors.push(writeError(index, err))
          if (ordered) break
        }
      }
      const reply: Doc = { n, nModified, ok: 1 }
      if (upserted.length > 0) reply.upserted = upserted
      if (writeErrors.length > 0) reply.writeErrors = writeErrors
      return reply
    },

    delete: (body, db) => {
      const collName = collectionName(body, 'delete')
      const coll = collectionOf(db, collName, false)
      let n = 0
      for (const statement of body.deletes as Doc[] ?? []) {
        if (statement.collation !== undefined || statement.hint !== undefined) throw unsupported('delete with collation or hint')
        if (coll === undefined) continue
        const found = matching(coll, statement.q)
        const targets = statement.limit === 1 ? found.slice(0, 1) : found
        const gone = new Set(targets)
        coll.docs = coll.docs.filter(doc => !gone.has(doc))
        n += targets.length
      }
      return { n, ok: 1 }
    },

    findAndModify: (body, db) => {
      const collName = collectionName(body, 'findAndModify')
      for (const option of ['collation', 'hint', 'let']) {
        if (body[option] !== undefined) throw unsupported(`the findAndModify option '${option}'`)
      }
      const coll = collectionOf(db, collName, true)!
      const [old] = matching(coll, body.query, body.sort)
      if (body.remove === true) {
        if (old === undefined) return { lastErrorObject: { n: 0 }, value: null, ok: 1 }
        coll.docs = coll.docs.filter(doc => doc !== old)
        return { lastErrorObject: { n: 1 }, value: project([old], body.fields)[0], ok: 1 }
      }
      if (body.update === undefined) throw new CommandFailure(9, 'FailedToParse', 'findAndModify needs remove or update')
      if (old !== undefined) {
        const next = updatedDoc(db, collName, coll, old, body.update, body.arrayFilters)
        replaceDoc(coll, old, next)
        return { lastErrorObject: { n: 1, updatedExisting: true }, value: project([body.new === true ? next : old], body.fields)[0], ok: 1 }
      }
      if (body.upsert !== true) return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 }
      const inserted = insertedDoc(db, collName, coll, applyUpdate(upsertBase(body.query ?? {}), body.update, body.arrayFilters))
      return {
        lastErrorObject: { n: 1, updatedExisting: false, upserted: inserted._id },
        value: body.new === true ? project([inserted], body.fields)[0] : null,
        ok: 1,
      }
    },

    aggregate: (body, db) => {
      const collName = collectionName(body, 'aggregate')
      for (const option of ['explain', 'collation', 'let']) {
        if (body[option] !== undefined) throw unsupported(`the aggregate option '${option}'`)
      }
      const pipeline: Doc[] = body.pipeline ?? []
      for (const stage of pipeline) {
        const name = Object.keys(stage)[0]
        if (name === '$out' || name === '$merge') throw unsupported(`the aggregation stage ${name}`)
      }
      const docs = aggregate(collectionOf(db, collName, false)?.docs ?? [], pipeline) as Doc[]
      return cursorReply(`${db}.${collName}`, docs, body.cursor?.batchSize, false, 'firstBatch')
    },

    createIndexes: (body, db) => {
      const collName = collectionName(body, 'createIndexes')
      const createdCollectionAutomatically = collectionOf(db, collName, false) === undefined
      const coll = collectionOf(db, collName, true)!
      const numIndexesBefore = coll.indexes.length
      for (const raw of body.indexes as Doc[] ?? []) {
        for (const option of Object.keys(raw)) {
          if (!INDEX_OPTIONS.has(option)) throw unsupported(`the index option '${option}'`)
        }
        const spec: IndexSpec = { name: raw.name, key: { ...raw.key }, unique: raw.unique === true }
        if (typeof raw.expireAfterSeconds === 'number') spec.expireAfterSeconds = raw.expireAfterSeconds
        const sameName = coll.indexes.find(index => index.name === spec.name)
        const sameKey = coll.indexes.find(index => EJSON.stringify(index.key) === EJSON.stringify(spec.key))
        if (sameName !== undefined || sameKey !== undefined) {
          if (sameName !== undefined && sameName === sameKey && EJSON.stringify(sameName) === EJSON.stringify(spec)) continue
          throw new CommandFailure(85, 'IndexOptionsConflict', `An existing index conflicts with the requested index ${spec.name}`)
        }
        if (spec.unique) {
          const seen = new Set<string>()
          for (const doc of coll.docs) {
            const key = indexKey(doc, spec)
            if (seen.has(key)) throw duplicateKey(db, collName, spec, doc)
            seen.add(key)
          }
        }
        coll.indexes.push(spec)
      }
      return { createdCollectionAutomatically, numIndexesBefore, numIndexesAfter: coll.indexes.length, ok: 1 }
    },

    listIndexes: (body, db) => {
      const collName = collectionName(body, 'listIndexes')
      const coll = collectionOf(db, collName, false)
      if (coll === undefined) throw new CommandFailure(26, 'NamespaceNotFound', `ns does not exist: ${db}.${collName}`)
      const specs = coll.indexes.map(index => {
        const spec: Doc = { v: 2, key: index.key, name: index.name }
        if (index.unique && index !== ID_INDEX) spec.unique = true
        if (index.expireAfterSeconds !== undefined) spec.expireAfterSeconds = index.expireAfterSeconds
        return spec
      })
      return cursorReply(`${db}.${collName}`, specs, body.cursor?.batchSize, false, 'firstBatch')
    },

    drop: (body, db) => {
      const collName = collectionName(body, 'drop')
      databases.get(db)?.delete(collName)
      return { ok: 1 }
    },

    dropDatabase: (_body, db) => {
      databases.delete(db)
      return { ok: 1 }
    },
  }
  commands.isMaster = commands.hello
  commands.ismaster = commands.hello

  function runCommand (body: Doc, connectionId: number): Doc {
    const name = Object.keys(body)[0] ?? ''
    const db = typeof body.$db === 'string' ? body.$db : 'admin'
    const handler = Object.hasOwn(commands, name) ? commands[name] : undefined
    try {
      if (handler === undefined) {
        throw new CommandFailure(59, 'CommandNotFound', `no such command: '${name}' (the MongoDB stand-in, a test double, does not support it)`)
      }
      if (body.startTransaction !== undefined || body.autocommit !== undefined) throw unsupported('transactions')
      return handler(body, db, connectionId)
    } catch (err) {
      if (err instanceof CommandFailure) return { ok: 0, errmsg: err.message, code: err.code, codeName: err.codeName, ...err.extra }
      return { ok: 0, errmsg: `${name}: ${(err as Error).message}`, code: 2, codeName: 'BadValue' }
    }
  }

  function header (length: number, responseTo: number, opCode: number): Buffer {
    const head = Buffer.alloc(16)
    head.writeInt32LE(length, 0)
    head.writeInt32LE(nextReplyId++, 4)
    head.writeInt32LE(responseTo, 8)
    head.writeInt32LE(opCode, 12)
    return head
  }

  function opMsgReply (requestId: number, reply: Doc): Buffer {
    const body = BSON.serialize(reply)
    const flags = Buffer.alloc(5) // flagBits (0) + section kind 0
    return Buffer.concat([header(16 + flags.length + body.length, requestId, OP_MSG), flags, body])
  }

  function opReply (requestId: number, reply: Doc): Buffer {
    const body = BSON.serialize(reply)
    const fields = Buffer.alloc(20) // responseFlags, cursorID (int64), startingFrom, numberReturned
    fields.writeInt32LE(1, 16)
    return Buffer.concat([header(16 + fields.length + body.length, requestId, OP_REPLY), fields, body])
  }

  function readOpMsg (message: Buffer): { body: Doc, moreToCome: boolean } {
    const flags = message.readUInt32LE(16)
    const end = message.length - ((flags & MSG_CHECKSUM_PRESENT) !== 0 ? 4 : 0)
    let body: Doc = {}
    const sequences: Doc = {}
    let offset = 20
    while (offset < end) {
      const kind = message[offset++]
      const size = message.readInt32LE(offset)
      if (kind === 0) {
        body = BSON.deserialize(message.subarray(offset, offset + size))
        offset += size
      } else if (kind === 1) {
        const sectionEnd = offset + size
        const nameEnd = message.indexOf(0, offset + 4)
        const identifier = message.toString('utf8', offset + 4, nameEnd)
        const docs: Doc[] = []
        let at = nameEnd + 1
        while (at < sectionEnd) {
          const docSize = message.readInt32LE(at)
          docs.push(BSON.deserialize(message.subarray(at, at + docSize)))
          at += docSize
        }
        sequences[identifier] = docs
        offset = sectionEnd
      } else {
        throw new Error(`unknown OP_MSG section kind ${kind}`)
      }
    }
    return { body: { ...body, ...sequences }, moreToCome: (flags & MSG_MORE_TO_COME) !== 0 }
  }

  function readOpQuery (message: Buffer): Doc {
    const nameEnd = message.indexOf(0, 20)
    const queryStart = nameEnd + 1 + 8 // numberToSkip, numberToReturn
    const size = message.readInt32LE(queryStart)
    const query = BSON.deserialize(message.subarray(queryStart, queryStart + size))
    const command = query.$query ?? query
    return { ...command, $db: message.toString('utf8', 20, nameEnd).split('.')[0] }
  }

  function handleMessage (socket: Socket, message: Buffer, connectionId: number): void {
    const requestId = message.readInt32LE(4)
    const opCode = message.readInt32LE(12)
    if (opCode === OP_MSG) {
      const { body, moreToCome } = readOpMsg(message)
      const reply = runCommand(body, connectionId)
      if (!moreToCome) socket.write(opMsgReply(requestId, reply))
      return
    }
    if (opCode === OP_QUERY) {
      // The driver uses OP_QUERY only for its first handshake, before it knows the server speaks OP_MSG.
      const command = readOpQuery(message)
      const name = Object.keys(command)[0]
      const reply = ['hello', 'isMaster', 'ismaster'].includes(name)
        ? runCommand(command, connectionId)
        : { ok: 0, errmsg: `OP_QUERY is only supported for the handshake by the MongoDB stand-in, not for '${name}'`, code: 352, codeName: 'UnsupportedOpQueryCommand' }
      socket.write(opReply(requestId, reply))
      return
    }
    throw new Error(`opCode ${opCode} is not supported by the MongoDB stand-in (a test double)`)
  }

  const server = createServer(socket => {
    sockets.add(socket)
    const connectionId = nextConnectionId++
    let pending = Buffer.alloc(0)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    socket.on('data', chunk => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      try {
        while (pending.length >= 4) {
          const length = pending.readInt32LE(0)
          if (length < 16 || length > MAX_MESSAGE_BYTES) throw new Error(`bad message length ${length}`)
          if (pending.length < length) break
          const message = pending.subarray(0, length)
          pending = pending.subarray(length)
          handleMessage(socket, message, connectionId)
        }
      } catch {
        socket.destroy()
      }
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('stand-in did not get a TCP port')

  return {
    url: `mongodb://127.0.0.1:${address.port}`,
    close: async () => {
      const closed = new Promise<void>(resolve => server.close(() => resolve()))
      for (const socket of sockets) socket.destroy()
      await closed
    },
  }
}
