// Which pass-through path is which owned resource, and which resources a body names
// (lib/proxy/access/resource-paths.ts; docs/model-proxy.md, "Upstream resources and their owners").
import t from 'tap'
import { fileName, outputFilesIn, referencesIn, resourceTarget } from '../../lib/proxy/access/resource-paths.ts'

t.test('a file reference in any form names files/{id}; a URL of another host names no gateway resource', async t => {
  for (const form of [
    'files/abc1', '/v1beta/files/abc1', 'https://generativelanguage.googleapis.com/v1beta/files/abc1',
    'HTTPS://GenerativeLanguage.GoogleApis.com/v1/files/abc1', 'http://generativelanguage.googleapis.com/v1beta/files/abc1',
    'https://generativelanguage.googleapis.com/v1beta/files/other/../abc1', 'https://generativelanguage.googleapis.com/v1beta/files/%61bc1',
    'https://generativelanguage.googleapis.com/v1beta/files/abc1:download?alt=media', 'https://eu-generativelanguage.googleapis.com/v1beta/files/abc1',
  ]) t.equal(fileName(form), 'files/abc1', form)
  t.equal(fileName('https://www.youtube.com/watch?v=x'), undefined)
  t.equal(fileName('https://generativelanguage.googleapis.com.example.com/v1beta/files/abc1'), undefined, 'a look-alike host is another host')
  t.equal(fileName('gs://bucket/files/abc1'), 'files/gs://bucket/files/abc1', 'another scheme names nothing anyone owns')
  t.equal(fileName('https://generativelanguage.googleapis.com/v1beta/cachedContents/x'), 'files/https://generativelanguage.googleapis.com/v1beta/cachedContents/x', 'a Google URI of no file: nobody\'s')
})

t.test('references are found wherever a request can hold them, in both spellings, but not in function arguments', async t => {
  const body = {
    cachedContent: 'cachedContents/c1',
    contents: [{ parts: [{ fileData: { fileUri: 'files/f1' } }, { file_data: { file_uri: 'files/f2' } }, { functionCall: { name: 'x', args: { fileUri: 'files/no', cachedContent: 'no' } } }, { functionResponse: { name: 'x', response: { cachedContent: 'no' }, parts: [{ fileData: { fileUri: 'files/f3' } }] } }] }],
    generateContentRequest: { cached_content: 'c2' },
    batch: { inputConfig: { fileName: 'files/f4', requests: { requests: [{ request: { cachedContent: 'cachedContents/c3' } }] } } },
  }
  t.same(referencesIn(body).map(r => r.name).sort(), ['cachedContents/c1', 'cachedContents/c2', 'cachedContents/c3', 'files/f1', 'files/f2', 'files/f3', 'files/f4'])
})

t.test('paths: lists, creations and single resources of each kind, case variants judged as what they name', async t => {
  t.same(resourceTarget('GET', '/v1beta/files', undefined), { op: 'list', kind: 'files', field: 'files' })
  t.same(resourceTarget('GET', '/v1beta/batches', undefined), { op: 'list', kind: 'batches', field: 'operations' })
  t.same(resourceTarget('GET', '/v1beta/models/veo/operations', undefined), { op: 'list', kind: 'batches', field: 'operations' })
  t.same(resourceTarget('POST', '/upload/v1beta/files', undefined), { op: 'create', kind: 'files', made: 'upload' })
  t.same(resourceTarget('POST', '/upload/v1beta/files', 'u1'), { op: 'item', kind: 'files', name: 'uploads/u1' })
  t.same(resourceTarget('POST', '/v1beta/files:register', undefined), { op: 'create', kind: 'files', made: 'files' })
  t.same(resourceTarget('POST', '/v1beta/cachedContents', undefined), { op: 'create', kind: 'caches', made: 'named' })
  t.same(resourceTarget('POST', '/v1beta/models/gemini-2.5-flash:BatchGenerateContent', undefined), { op: 'create', kind: 'batches', made: 'named' })
  t.same(resourceTarget('GET', '/v1beta/Files/abc:download', undefined), { op: 'item', kind: 'files', name: 'files/abc' })
  t.same(resourceTarget('POST', '/v1beta/batches/b1:cancel', undefined), { op: 'item', kind: 'batches', name: 'batches/b1' })
  t.same(resourceTarget('GET', '/v1beta/models/veo/operations/o1', undefined), { op: 'item', kind: 'batches', name: 'models/veo/operations/o1' })
  t.same(resourceTarget('POST', '/v1beta/models/gemini-embedding-001:embedContent', undefined), { op: 'model' })
  t.same(resourceTarget('GET', '/v1beta/tunedModels', undefined), { op: 'other', what: 'tunedModels' })
  t.same(resourceTarget('POST', '/upload/v1beta/fileSearchStores/s:uploadToFileSearchStore', undefined).op, 'other')
})

t.test("a batch's or operation's output files are found, never its input", async t => {
  t.same(outputFilesIn({ name: 'batches/b', metadata: { inputConfig: { fileName: 'files/in' }, output: { responsesFile: 'files/out1' } }, response: { output: { responsesFile: 'files/out2' } } }).sort(), ['files/out1', 'files/out2'])
  t.same(outputFilesIn({ response: { responsesFile: 'files/out3' } }), ['files/out3'])
  t.same(outputFilesIn({ response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://generativelanguage.googleapis.com/v1beta/files/v1:download?alt=media' } }] } } }), ['files/v1'])
  t.same(outputFilesIn({ response: { video: { uri: 'https://example.com/v.mp4' } }, fileName: 'files/top' }), [], 'another host, or a name outside the output')
})

t.test('batch output ownership is read only from the documented response fields, never client-echoed metadata or model output', async t => {
  const echoed = {
    metadata: { displayName: 'files/op1', dest: { fileName: 'files/op2' }, output: { inlinedResponses: { inlinedResponses: [{ response: { candidates: [{ content: { parts: [{ fileData: { fileUri: 'files/op3' } }] } }] } }] } } },
    response: { dest: { fileName: 'files/op4' }, inlinedResponses: { inlinedResponses: [{ response: { text: 'files/op5', fileUri: 'files/op6' } }] }, metadata: { uri: 'files/op7' } },
  }
  t.same(outputFilesIn(echoed), [])
})

t.test('a file URI on a configured upstream host is a file reference, as a Google one is', async t => {
  t.equal(fileName('http://127.0.0.1:8080/v1beta/files/abc1', ['127.0.0.1']), 'files/abc1')
  t.equal(fileName('http://127.0.0.1:8080/v1beta/files/abc1'), undefined, 'another host without the configuration')
  t.same(referencesIn({ contents: [{ parts: [{ fileData: { fileUri: 'https://gemini.internal.example/v1beta/files/abc1' } }] }] }, ['gemini.internal.example']), [{ field: 'fileUri', name: 'files/abc1' }])
  t.same(outputFilesIn({ response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'https://gemini.internal.example/v1beta/files/v2:download?alt=media' } }] } } }, ['gemini.internal.example']), ['files/v2'])
})
