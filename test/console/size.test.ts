// The whole console stays small (docs/console.md, "Assets"; the README states its size): under 150 KB gzipped,
// with nothing fetched from elsewhere.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { ensureConsoleBuilt } from '../support/console-build.ts'

const LIMIT = 150 * 1024

t.test('the built console is under 150 KB gzipped, and names no other origin', async t => {
  const dir = ensureConsoleBuilt()
  const files = readdirSync(dir)
  t.same(files.sort(), ['app.css', 'app.js', 'index.html'], 'one page, one script, one stylesheet')
  let total = 0
  for (const name of files) {
    const bytes = readFileSync(join(dir, name))
    total += gzipSync(bytes, { level: 9 }).length
    const text = bytes.toString('utf8')
    t.notMatch(text, /(?:src|href)=["']?(?:https?:)?\/\//, `${name} loads nothing from another origin`)
    t.notMatch(text, /@import\s+url\(["']?https?:/, `${name} imports no remote stylesheet`)
  }
  t.ok(total < LIMIT, `${(total / 1024).toFixed(1)} KB gzipped (limit ${LIMIT / 1024} KB)`)
  t.comment(`console size: ${(total / 1024).toFixed(1)} KB gzipped`)
})

t.test('the page has no inline script or style, which the console\'s CSP would refuse', async t => {
  const html = readFileSync(join(ensureConsoleBuilt(), 'index.html'), 'utf8')
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src')
  t.notMatch(html, /<style|\sstyle=/, 'no style element or attribute')
  t.notMatch(html, /\son[a-z]+=/, 'no event-handler attribute')
})
