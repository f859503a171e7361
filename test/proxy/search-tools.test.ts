import t from 'tap'
import { declaresFunctions, searchOutcome } from '../../lib/proxy/search-tools.ts'

// The search-versus-function-tools rule both routes follow (lib/proxy/search-tools.ts).
t.test('function tools win over search; search without function tools is added', async t => {
  t.equal(searchOutcome(true, false), 'add')
  t.equal(searchOutcome(true, true), 'dropped')
  t.equal(searchOutcome(false, true), 'none')
  t.equal(searchOutcome(false, false), 'none')
})

t.test('function tools are non-empty functionDeclarations in either spelling', async t => {
  t.ok(declaresFunctions([{ googleSearch: {} }, { functionDeclarations: [{ name: 'f' }] }]))
  t.ok(declaresFunctions([{ function_declarations: [{ name: 'f' }] }]))
  t.notOk(declaresFunctions([{ functionDeclarations: [] }, { codeExecution: {} }, null, 'x', [{ functionDeclarations: [{}] }]]))
  t.notOk(declaresFunctions([]))
})
