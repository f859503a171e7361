// The system user's generated password goes to a file only the process owner can read, never to the log (logs
// are shipped to places many people can read); the log names the file. Where: AUTH_ADMIN_PASSWORD_FILE, else
// `admin-password` beside the embedded store's file, else a new private temp directory (memory-only store or
// MongoDB). The file is created exclusively with mode 0600, so a symlink planted at its path is never followed.
import { constants } from 'node:fs'
import { mkdir, mkdtemp, open, rm, unlink } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { GatewayConfig } from './config.ts'

const ADMIN_PASSWORD_FILE_NAME = 'admin-password'
// O_EXCL (with O_CREAT) refuses any existing entry, a symlink or a dangling one included; O_NOFOLLOW says so twice.
const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)

export interface AdminPasswordFile {
  /** Absolute path of the file. */
  readonly path: string
  /** With a memory-only store the password dies with the process: removes the file (and a temp directory made for it). Otherwise nothing. */
  discard (): Promise<void>
}

async function createExclusive (file: string): Promise<FileHandle> {
  try {
    return await open(file, CREATE, 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    // Left by an earlier start (a reset store, a memory-only run) or planted: unlink removes the entry itself,
    // never what a symlink points at. If something is planted again in between, the second open fails.
    await unlink(file)
    return await open(file, CREATE, 0o600)
  }
}

/** Writes the password (a line) to its file and returns where; throws with what to set when it cannot. */
export async function writeAdminPasswordFile (config: GatewayConfig, username: string, password: string): Promise<AdminPasswordFile> {
  const memoryOnly = config.mongodbUrl === undefined && config.authDataFile === undefined
  let file = path.join(tmpdir(), 'gatehouse-*', ADMIN_PASSWORD_FILE_NAME)
  let tempDir: string | undefined
  try {
    if (config.authAdminPasswordFile !== undefined) file = path.resolve(config.authAdminPasswordFile)
    else if (config.mongodbUrl === undefined && config.authDataFile !== undefined) file = path.resolve(path.dirname(config.authDataFile), ADMIN_PASSWORD_FILE_NAME)
    else {
      tempDir = await mkdtemp(path.join(tmpdir(), 'gatehouse-')) // mode 0700, a fresh name
      file = path.join(tempDir, ADMIN_PASSWORD_FILE_NAME)
    }
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    const handle = await createExclusive(file)
    try {
      await handle.chmod(0o600) // whatever the umask
      await handle.writeFile(password + '\n')
      await handle.sync()
    } catch (err) {
      await unlink(file).catch(() => {})
      throw err
    } finally {
      await handle.close()
    }
  } catch (err) {
    throw new Error(`could not write the generated password of system user "${username}" to ${file} ` +
      `(${(err as Error).message}); set AUTH_ADMIN_PASSWORD_FILE to a writable path, or AUTH_ADMIN_PASSWORD to choose the password ` +
      '(a configured password replaces the stored one at start)', { cause: err })
  }
  return {
    path: file,
    async discard () {
      if (!memoryOnly) return
      await rm(tempDir ?? file, { recursive: true, force: true })
    },
  }
}
