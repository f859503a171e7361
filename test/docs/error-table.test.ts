import t from 'tap'
import { ERRORS } from '../../lib/index.ts'
import { backticked, readRepoFile, tableUnder } from './markdown.ts'

// The README's "Error codes" table is the list users read; lib/errors.ts is the list the code uses
// (docs/errors.md, "The catalogue"). Rows hold two code/status pairs; a cell may name several codes with one
// status (`A`, `B` | 404) or one status each (`A` / `B` | 404 / 405).
function documentedCodes (): { statuses: Map<string, number>, problems: string[] } {
  const statuses = new Map<string, number>()
  const problems: string[] = []
  for (const row of tableUnder(readRepoFile('README.md'), '### Error codes')) {
    for (let i = 0; i + 1 < row.length; i += 2) {
      const codes = backticked(row[i]).filter(c => /^[A-Z][A-Z0-9_]*$/.test(c))
      const numbers = (row[i + 1].match(/\b\d{3}\b/g) ?? []).map(Number)
      if (codes.length === 0 && numbers.length === 0) continue
      if (numbers.length !== 1 && numbers.length !== codes.length) {
        problems.push(`"${row[i]} | ${row[i + 1]}" pairs ${codes.length} code(s) with ${numbers.length} status(es)`)
        continue
      }
      codes.forEach((code, k) => {
        if (statuses.has(code)) problems.push(`${code} is listed twice`)
        statuses.set(code, numbers.length === 1 ? numbers[0] : numbers[k])
      })
    }
  }
  return { statuses, problems }
}

t.test('the README "Error codes" table lists exactly the codes of ERRORS, each with its status', async t => {
  const { statuses, problems } = documentedCodes()
  t.same(problems, [], 'every row of the table can be read')
  const missing = Object.keys(ERRORS).filter(code => !statuses.has(code))
  t.same(missing, [], `codes of lib/errors.ts missing from the README's "Error codes" table: ${missing.join(', ') || 'none'}`)
  const extra = [...statuses.keys()].filter(code => !Object.hasOwn(ERRORS, code))
  t.same(extra, [], `codes in the README's "Error codes" table that lib/errors.ts does not define: ${extra.join(', ') || 'none'}`)
  const wrong = Object.entries(ERRORS)
    .filter(([code, { status }]) => statuses.has(code) && statuses.get(code) !== status)
    .map(([code, { status }]) => `${code}: README says ${statuses.get(code)}, lib/errors.ts ${status}`)
  t.same(wrong, [], `statuses that differ: ${wrong.join('; ') || 'none'}`)
})
