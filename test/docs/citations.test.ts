import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { ROOT } from './markdown.ts'

// Comments cite the repository's own docs, by file and heading, and nothing outside the repository
// (docs/README.md, "Citing these files"). This file names the forbidden citations, so it skips itself.
const SELF = path.relative(ROOT, import.meta.filename)
const SCANNED = ['lib', 'gateway', 'test', 'bench', 'examples', 'charts', 'scripts', 'docs', '.github', '.ci', 'README.md', 'Dockerfile', 'package.json']
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.tap'])

const OUTSIDE = [
  /(?<!docs\/)\b(?:proxy-upstream|contract|design|style)\.md\b/,
  /\/work\/shared|shared\/(?:seeds|docs)\//,
  /\bseeds?\/0\d\d|\bseed 0\d\d\b/i,
  /§/,
]

function filesUnder (relative: string): string[] {
  const full = path.join(ROOT, relative)
  if (!existsSync(full)) return []
  if (statSync(full).isFile()) return [relative]
  return readdirSync(full, { withFileTypes: true })
    .filter(entry => !SKIPPED_DIRS.has(entry.name))
    .flatMap(entry => filesUnder(path.join(relative, entry.name)))
}

/** Every scanned text file with its lines. */
const files = SCANNED.flatMap(filesUnder)
  .filter(file => file !== SELF)
  .map(file => ({ file, text: readFileSync(path.join(ROOT, file), 'utf8') }))
  .filter(({ text }) => !text.includes('\u0000'))
  .map(({ file, text }) => ({ file, lines: text.split('\n') }))

/**
 * A file's lines joined into one, each without its indentation and comment marker (`//`, `*`, `#`), so that a
 * citation wrapped onto the next comment line reads whole; `lineOf` maps an index back to its line number.
 */
function flatten (lines: readonly string[]): { flat: string, lineOf: (index: number) => number } {
  const starts: number[] = []
  let flat = ''
  for (const line of lines) {
    starts.push(flat.length)
    flat += line.replace(/^\s*(?:\/\/+|\/?\*+|#+)?\s*/, '') + ' '
  }
  return { flat, lineOf: index => starts.findLastIndex(start => start <= index) + 1 }
}

const headingCache = new Map<string, Set<string>>()
/** The heading texts of a Markdown file (`## Sessions` → `Sessions`). */
function headingsOf (file: string): Set<string> {
  let headings = headingCache.get(file)
  if (headings === undefined) {
    headings = new Set(readFileSync(file, 'utf8').split('\n').flatMap(line => /^#{1,6}\s+(.+?)\s*$/.exec(line)?.[1] ?? []))
    headingCache.set(file, headings)
  }
  return headings
}

/** The headings quoted right after a citation: `, "A" and "B"` → ['A', 'B']. */
function quotedHeadings (rest: string): string[] {
  const found: string[] = []
  const next = /(?:,\s*|\s+and\s+)"([^"]+)"/y
  for (let m = next.exec(rest); m !== null; m = next.exec(rest)) found.push(m[1])
  return found
}

/** Problems with one citation of `target` (a path from the repository root) followed by `rest`. */
function checkCitation (where: string, target: string, rest: string): string[] {
  const full = path.join(ROOT, target)
  if (!existsSync(full)) return [`${where}: ${target} does not exist`]
  if (!target.endsWith('.md')) return []
  return quotedHeadings(rest).filter(h => !headingsOf(full).has(h)).map(h => `${where}: ${target} has no heading "${h}"`)
}

t.test('no file cites a document outside the repository', async t => {
  const found: string[] = []
  for (const { file, lines } of files) {
    lines.forEach((line, i) => {
      for (const pattern of OUTSIDE) {
        const m = pattern.exec(line)
        if (m !== null) found.push(`${file}:${i + 1}: "${m[0]}"`)
      }
    })
  }
  t.ok(files.length > 100, `scanned ${files.length} files`)
  t.same(found, [], `citations of files outside the repository (cite docs/<file>.md, "<heading>" instead): ${found.join(', ') || 'none'}`)
})

t.test('every citation of docs/ names a file and headings that exist', async t => {
  const problems: string[] = []
  let citations = 0
  for (const { file, lines } of files) {
    const { flat, lineOf } = flatten(lines)
    for (const m of flat.matchAll(/(?<![\w./-])(docs\/[\w.-]+\.md)/g)) {
      citations++
      problems.push(...checkCitation(`${file}:${lineOf(m.index)}`, m[1], flat.slice(m.index + m[1].length)))
    }
  }
  t.ok(citations >= 20, `found ${citations} citations`)
  t.same(problems, [], `broken citations: ${problems.join('; ') || 'none'}`)
})

t.test('relative links in the Markdown files lead to files (and quoted headings) that exist', async t => {
  const problems: string[] = []
  for (const { file, lines } of files.filter(f => f.file.endsWith('.md'))) {
    // Inline code is not a link: `![image](data:...)` shows a Markdown image, it does not make one.
    const { flat, lineOf } = flatten(lines.map(line => line.replace(/`[^`]*`/g, '``')))
    for (const m of flat.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1].split('#')[0]
      if (target === '' || /^[a-z]+:/i.test(target)) continue
      const fromRoot = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), target))
      problems.push(...checkCitation(`${file}:${lineOf(m.index)}`, fromRoot, flat.slice(m.index + m[0].length)))
    }
  }
  t.same(problems, [], `broken links: ${problems.join('; ') || 'none'}`)
})
