// A model played by the Google fake (fake.script, test/support/fake-upstream.ts) for the real-agent suite: given the
// tools an agent declared, it writes a file with the agent's file or patch tool, reads it back with the agent's shell
// (or read) tool, then answers quoting what the tool result said. Every function call carries a thought signature
// of its own, and every signature an agent sends back is checked against the ones issued.
import { randomBytes } from 'node:crypto'
import { errorReply } from '../support/fake-upstream.ts'
import type { FakeReply, FakeRequest } from '../support/fake-upstream.ts'

export interface Task {
  /** Absolute path of the file the model writes. */
  file: string
  /** The one line it writes there. */
  content: string
}

export interface ScriptedModel {
  script (rec: FakeRequest): FakeReply | undefined
  /** What the model did, in order: `write apply_patch`, `read Bash`, `answer`, `utility`. */
  steps: string[]
  /** Signatures issued on function calls, and those of them sent back on their calls. */
  /** Signature → the name of the function call it was issued on. */
  issued: Map<string, string>
  returned: Set<string>
  /** Signatures sent back that this model never issued on that call (a placeholder, a corrupted or moved one). */
  foreign: Set<string>
  /** The final answer, once given. */
  answer: string | undefined
}

// The values Google documents as skipping signature validation (ai.google.dev/gemini-api/docs/thought-signatures).
const PLACEHOLDERS = new Set(['skip_thought_signature_validator', 'context_engineering_is_the_way_to_go'])

type Part = Record<string, any>
interface Content { role?: string, parts?: Part[] }
interface Declaration { name: string, schema: Record<string, any> }

// Tool names by preference: the agents' own (Gemini CLI, Claude Code, opencode, Codex), then what a schema suggests.
const WRITE_TOOLS = ['write_file', 'Write', 'write', 'apply_patch']
const SHELL_TOOLS = ['run_shell_command', 'Bash', 'bash', 'exec_command', 'shell_command', 'shell']
const READ_TOOLS = ['read_file', 'Read', 'read']

function declarations (body: any): Declaration[] {
  const tools: Array<{ functionDeclarations?: Array<Record<string, any>> }> = Array.isArray(body?.tools) ? body.tools : []
  return tools.flatMap(t => t.functionDeclarations ?? []).map(d => ({ name: String(d.name), schema: d.parametersJsonSchema ?? d.parameters ?? {} }))
}

function pick (declared: Declaration[], names: string[]): Declaration | undefined {
  for (const name of names) {
    const found = declared.find(d => d.name === name || d.name.endsWith(`__${name}`))
    if (found !== undefined) return found
  }
  return undefined
}

function properties (schema: Record<string, any>): Record<string, any> {
  return schema.properties ?? {}
}

/** Arguments for the write tool, from the names its schema declares. */
function writeArgs (tool: Declaration, task: Task): Record<string, unknown> {
  const props = properties(tool.schema)
  if (tool.name.endsWith('apply_patch') || (Object.keys(props).length === 1 && props.input !== undefined)) {
    return { input: `*** Begin Patch\n*** Add File: ${task.file}\n+${task.content}\n*** End Patch\n` }
  }
  const args: Record<string, unknown> = {}
  for (const name of Object.keys(props)) {
    if (/path/i.test(name)) args[name] = task.file
    else if (/^(content|contents|text)$/i.test(name)) args[name] = `${task.content}\n`
  }
  return args
}

/** Arguments for the shell or read tool that shows the file (a shell's directory argument left to its default). */
function readArgs (tool: Declaration, task: Task): Record<string, unknown> {
  const props = properties(tool.schema)
  const shell = Object.keys(props).some(name => /^(command|cmd)$/.test(name))
  const args: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(props)) {
    if (/^(command|cmd)$/.test(name)) args[name] = spec?.type === 'array' ? ['bash', '-lc', `cat ${task.file}`] : `cat ${task.file}`
    else if (!shell && /path/i.test(name)) args[name] = task.file
    else if (name === 'description') args[name] = 'Show the file just written'
  }
  return args
}

/** A value of a JSON schema with the fewest words: what a utility call (next speaker, loop check) gets. */
function minimal (schema: any): unknown {
  if (schema === null || typeof schema !== 'object') return 'ok'
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  if (type === 'object' || schema.properties !== undefined) {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, minimal(v)]))
  }
  if (type === 'array') return []
  if (type === 'number' || type === 'integer') return 0
  if (type === 'boolean') return false
  return 'ok'
}

/** The text of a function response, wherever the agent put it. */
function responseText (part: Part): string {
  const response = part.functionResponse?.response
  return typeof response === 'string' ? response : JSON.stringify(response ?? {})
}

function strings (value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings)
  return []
}

/** The line of a tool result (any string in its response) that holds the content. */
function quoted (part: Part, content: string): string | undefined {
  const line = strings(part.functionResponse?.response).flatMap(s => s.split('\n')).find(l => l.includes(content))
  // A read tool's line number or a shell tool's "Output:" label is not what the file says.
  return line?.trim().replace(/^(\d+[\t→:|]|Output:|stdout:)\s*/, '')
}

export function scriptedModel (task: Task): ScriptedModel {
  const model: ScriptedModel = { script, steps: [], issued: new Map(), returned: new Set(), foreign: new Set(), answer: undefined }

  function signature (name: string): string {
    const sig = randomBytes(24).toString('base64')
    model.issued.set(sig, name)
    return sig
  }

  function reply (rec: FakeRequest, parts: Part[], thinking: boolean): FakeReply {
    const usage = { promptTokenCount: Math.ceil(JSON.stringify(rec.body ?? '').length / 4), candidatesTokenCount: 20, totalTokenCount: 0, ...(thinking ? { thoughtsTokenCount: 8 } : {}) }
    usage.totalTokenCount = usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0)
    const thought = thinking ? [{ text: 'Working through the task step by step.', thought: true }] : []
    const last = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, modelVersion: rec.model }
    if (rec.call === 'generateContent') {
      return { body: { ...last, candidates: [{ ...last.candidates[0], content: { role: 'model', parts: [...thought, ...parts] } }] } }
    }
    const first = { candidates: [{ content: { role: 'model', parts: thought.length > 0 ? thought : [{ text: '' }] }, index: 0 }], modelVersion: rec.model }
    return { chunks: [first, last] }
  }

  function script (rec: FakeRequest): FakeReply | undefined {
    const body = rec.body ?? {}
    const contents: Content[] = Array.isArray(body.contents) ? body.contents : []
    const thinking = body.generationConfig?.thinkingConfig?.includeThoughts === true
    let corrupted = false
    for (const c of contents) {
      if (c.role !== 'model') continue
      for (const p of c.parts ?? []) {
        if (p.functionCall === undefined || typeof p.thoughtSignature !== 'string') continue
        if (model.issued.get(p.thoughtSignature) === p.functionCall.name) { model.returned.add(p.thoughtSignature); continue }
        model.foreign.add(p.thoughtSignature)
        if (!PLACEHOLDERS.has(p.thoughtSignature)) corrupted = true
      }
    }
    // Google's answer to a signature it did not issue (a placeholder passes, but the suite counts it as a failure).
    if (corrupted) return errorReply(400, { message: 'Corrupted thought signature.' })
    const declared = declarations(body)
    const write = pick(declared, WRITE_TOOLS)
    const read = pick(declared, SHELL_TOOLS) ?? pick(declared, READ_TOOLS)
    if (write === undefined || read === undefined) {
      // A call outside the task (a title, a next-speaker or loop check): the shortest answer its schema allows.
      model.steps.push('utility')
      const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema
      const text = schema !== undefined ? JSON.stringify(minimal(schema)) : body.generationConfig?.responseMimeType === 'application/json' ? '{}' : 'Notes file check'
      return reply(rec, [{ text }], false)
    }
    const calls = contents.flatMap(c => c.role === 'model' ? (c.parts ?? []).filter(p => p.functionCall !== undefined) : [])
    const results = contents.flatMap(c => c.role !== 'model' ? (c.parts ?? []).filter(p => p.functionResponse !== undefined) : [])
    const wrote = calls.some(p => p.functionCall.name === write.name)
    const readBack = results.find(p => p.functionResponse.name === read.name && responseText(p).includes(task.content))
    if (!wrote) {
      model.steps.push(`write ${write.name}`)
      return reply(rec, [{ functionCall: { name: write.name, args: writeArgs(write, task) }, thoughtSignature: signature(write.name) }], thinking)
    }
    const readCalls = calls.filter(p => p.functionCall.name === read.name).length
    if (readBack === undefined && readCalls < 2) {
      model.steps.push(`read ${read.name}`)
      return reply(rec, [{ functionCall: { name: read.name, args: readArgs(read, task) }, thoughtSignature: signature(read.name) }], thinking)
    }
    const line = readBack === undefined ? undefined : quoted(readBack, task.content)
    model.answer = line === undefined
      ? `I could not read the file back; the last tool result was: ${results.length === 0 ? 'none' : responseText(results.at(-1) as Part).slice(0, 300)}`
      : `I wrote ${task.file} and read it back. It says: "${line}"`
    model.steps.push('answer')
    return reply(rec, [{ text: model.answer }], thinking)
  }

  return model
}
