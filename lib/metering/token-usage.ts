/** Tokens one upstream call used, as its usage metadata reports them: what limits charge and usage records. */
export interface TokenUsage {
  /** promptTokenCount: every prompt token, the cached ones included. */
  inputTokens: number
  outputTokens: number
  /** Billed as output. */
  thinkingTokens: number
  /** The part of inputTokens read from a cache. */
  cachedTokens: number
  /** toolUsePromptTokenCount: the part of inputTokens that was tool results fed back to the model; absent counts 0. */
  toolUseTokens?: number
  /** Google Search queries the model ran (groundingMetadata.webSearchQueries), each billed the search fee; absent: 0. */
  searchQueries?: number
}
