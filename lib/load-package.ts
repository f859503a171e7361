// The packages that only some uses of the library need, loaded on first use rather than when `gatehouse` is
// imported (docs/configuration.md, "What each piece costs"): importing undici and joi alone took 440 ms and 39 MB.
// undici, joi and @node-rs/argon2 are dependencies, loaded synchronously (all CommonJS) where first needed; mongodb and
// google-auth-library are optional peer dependencies, imported by the configurations that use them.
import { createRequire } from 'node:module'
import { ConfigurationError } from './errors.ts'

const require = createRequire(import.meta.url)
// Each kept once loaded: the argon2 and image-fetch paths ask for theirs on every call.
let undiciModule: typeof import('undici') | undefined
let argon2Module: typeof import('@node-rs/argon2') | undefined
let joiModule: typeof import('joi') | undefined
let boomModule: HapiBoom | undefined

/** The part of @hapi/boom the Hapi host uses. */
interface HapiBoom { notFound: () => Error }

/** undici: the upstream client's Agent and the image fetcher, on the first upstream call or image fetch. */
export function undici (): typeof import('undici') {
  return (undiciModule ??= require('undici') as typeof import('undici'))
}

/** @node-rs/argon2 (and its native binding, 6 MB of RSS): on the first password hashed or checked. */
export function argon2 (): typeof import('@node-rs/argon2') {
  return (argon2Module ??= require('@node-rs/argon2') as typeof import('@node-rs/argon2'))
}

/** joi: the request schemas, built on the first request that one of them checks. */
export function joi (): typeof import('joi') {
  return (joiModule ??= require('joi') as typeof import('joi'))
}

/**
 * @hapi/boom as the installed Hapi depends on it (Hapi is the Hapi host's peer dependency, and Boom comes with it):
 * Hapi's own 404 for a path the host's wildcard routes take but no table does (lib/http/hapi-adapter.ts).
 */
export function hapiBoom (): HapiBoom {
  return (boomModule ??= createRequire(require.resolve('@hapi/hapi'))('@hapi/boom') as HapiBoom)
}

/**
 * An optional peer dependency (package.json, "peerDependenciesMeta"), imported by `load`; when it is not installed,
 * a ConfigurationError naming `option` and the package to install instead of the loader's own message.
 */
export async function optionalPackage<T> (name: string, option: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const missing = (err as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && (err as Error).message.includes(`'${name}'`)
    if (!missing) throw err
    throw new ConfigurationError(option, `${option} needs the ${name} package, an optional peer dependency of gatehouse: npm install ${name}`, { cause: err })
  }
}
