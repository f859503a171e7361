// Reading the project's Markdown the way the docs tests need it: the rows of the first table under a heading.
import { readFileSync } from 'node:fs'
import path from 'node:path'

export const ROOT = path.resolve(import.meta.dirname, '../..')

export function readRepoFile (relative: string): string {
  return readFileSync(path.join(ROOT, relative), 'utf8')
}

/** The cells of a table row, trimmed: `| a | b |` → ['a', 'b']. An escaped `\|` stays inside its cell. */
export function cells (row: string): string[] {
  return row.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map(c => c.trim())
}

/**
 * The body rows (header and separator left out) of the first table after the line `heading`, before the next
 * heading. Throws naming the heading when there is none, so a renamed section fails loudly.
 */
export function tableUnder (markdown: string, heading: string, file = 'README.md'): string[][] {
  const lines = markdown.split('\n')
  const at = lines.indexOf(heading)
  if (at < 0) throw new Error(`${file} has no line "${heading}"`)
  const rows: string[] = []
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith('#')) break
    if (line.startsWith('|')) rows.push(line)
    else if (rows.length > 0) break
  }
  if (rows.length < 3) throw new Error(`${file} has no table under "${heading}"`)
  return rows.slice(2).map(cells)
}

/** The names in backticks in a piece of Markdown: "`A`, `B_C`" → ['A', 'B_C']. */
export function backticked (text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map(m => m[1])
}
