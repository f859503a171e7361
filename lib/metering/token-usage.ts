/** Tokens one upstream call used, as its usage metadata reports them: what limits charge and usage records. */
export interface TokenUsage { inputTokens: number, outputTokens: number, thinkingTokens: number, cachedTokens: number }
