// A file named by a createProxy option (modelsFile, pricesFile), read and parsed once at construction, its failure
// a ConfigurationError naming the option and the file: one wording for every such file.
import { readFileSync } from 'node:fs'
import { ConfigurationError } from '../errors.ts'

/** The parsed JSON of `path`, or a ConfigurationError for `option` saying why it could not be had. */
export function readJsonOptionFile (option: string, path: string): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new ConfigurationError(option, `createProxy: ${option} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { cause: err })
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new ConfigurationError(option, `createProxy: ${option} ${path} is not JSON (${(err as Error).message})`, { cause: err })
  }
}
