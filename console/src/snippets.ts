// Ready-made client settings for a new key, with the gateway's address as this page sees it.
export interface Snippet { id: string, label: string, text: string }

/** The gateway's root URL: the page's address without the console's path (an ingress may have stripped a prefix before it). */
export function gatewayRoot (consolePath: string): string {
  const here = new URL('.', document.baseURI)
  const path = here.pathname.replace(/\/$/, '')
  const root = path.endsWith(consolePath) ? path.slice(0, -consolePath.length) : path
  return here.origin + root
}

export function snippets (root: string, key: string, model: string): Snippet[] {
  return [
    {
      id: 'openai',
      label: 'openai SDK',
      text: `import OpenAI from 'openai'\n\nconst openai = new OpenAI({ baseURL: '${root}/v1', apiKey: '${key}' })\nconst reply = await openai.chat.completions.create({\n  model: '${model}',\n  messages: [{ role: 'user', content: 'Hello' }],\n})\nconsole.log(reply.choices[0].message.content)\n`,
    },
    {
      id: 'genai',
      label: '@google/genai',
      text: `import { GoogleGenAI } from '@google/genai'\n\nconst ai = new GoogleGenAI({ apiKey: '${key}', httpOptions: { baseUrl: '${root}' } })\nconst reply = await ai.models.generateContent({ model: '${model}', contents: 'Hello' })\nconsole.log(reply.text)\n`,
    },
    {
      id: 'codex',
      label: 'Codex CLI',
      text: `# ~/.codex/config.toml  (then: export GATEHOUSE_API_KEY='${key}')\nmodel = "${model}"\nmodel_provider = "gatehouse"\n\n[model_providers.gatehouse]\nname = "Gatehouse"\nbase_url = "${root}/v1"\nenv_key = "GATEHOUSE_API_KEY"\nwire_api = "responses"\nmodel_catalog_url = "${root}/v1/models"\n`,
    },
    {
      id: 'claude',
      label: 'Claude Code',
      text: `# Claude Code calls Gatehouse's Anthropic Messages API (${root}/v1/messages)\nexport ANTHROPIC_BASE_URL='${root}'\nexport ANTHROPIC_AUTH_TOKEN='${key}'\nexport ANTHROPIC_MODEL='${model}'\nexport ANTHROPIC_DEFAULT_HAIKU_MODEL='${model}'\nclaude\n`,
    },
    {
      id: 'curl',
      label: 'curl',
      text: `curl ${root}/v1/chat/completions \\\n  -H 'authorization: Bearer ${key}' \\\n  -H 'content-type: application/json' \\\n  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello"}]}'\n`,
    },
  ]
}
