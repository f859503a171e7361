// Safety settings sent when the client gives none (docs/model-proxy.md, "Safety settings"): every category at
// BLOCK_NONE, as the reference and gemini-cli do. Configurable through createProxy's `safetySettings`.

export interface SafetySetting {
  category: string
  threshold: string
}

const CATEGORIES = [
  'HARASSMENT',
  'HATE_SPEECH',
  'SEXUALLY_EXPLICIT',
  'DANGEROUS_CONTENT',
  'CIVIC_INTEGRITY',
  'IMAGE_DANGEROUS_CONTENT',
  'IMAGE_HARASSMENT',
  'IMAGE_HATE',
  'IMAGE_SEXUALLY_EXPLICIT',
  'UNSPECIFIED',
  'JAILBREAK',
]

export const DEFAULT_SAFETY_SETTINGS: readonly SafetySetting[] = Object.freeze(
  CATEGORIES.map(c => Object.freeze({ category: `HARM_CATEGORY_${c}`, threshold: 'BLOCK_NONE' })),
)
