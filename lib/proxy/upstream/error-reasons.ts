// Whose fault an upstream error is, read from Google's own answer: the one table of ErrorInfo reasons that make a
// credential unusable, and the one rule built on it (docs/upstream-protocol.md, "Upstream error reasons"). Only a
// credential fault changes a pooled credential's state; a 429 cools it down for the model called; everything else
// (a 403 or 404 about a file, a cache or a model the request named, a 400 about the request) is the caller's error
// and goes back to the caller as it is.
import type { GatehouseError } from '../../errors.ts'
import { errorReasons } from './errors.ts'

/**
 * ErrorInfo reasons that say the credential itself cannot be used, with what each means. Source: Google's
 * `google.api.ErrorReason` enum (the `googleapis.com` error domain), plus
 * IAM_PERMISSION_DENIED (domain `iam.googleapis.com`, the credential lacks a role on the project). An expired Gemini
 * API key answers API_KEY_INVALID with the message "API key expired. Please renew the API key.".
 */
export const CREDENTIAL_FAULT_REASONS: Readonly<Record<string, string>> = {
  API_KEY_INVALID: 'the API key is invalid, unknown or expired',
  API_KEY_EXPIRED: 'the API key has expired',
  API_KEY_SERVICE_BLOCKED: 'the API key is restricted from this API',
  API_KEY_HTTP_REFERRER_BLOCKED: 'the API key\'s HTTP referrer restriction refuses the call',
  API_KEY_IP_ADDRESS_BLOCKED: 'the API key\'s IP address restriction refuses the call',
  API_KEY_ANDROID_APP_BLOCKED: 'the API key\'s Android app restriction refuses the call',
  API_KEY_IOS_APP_BLOCKED: 'the API key\'s iOS app restriction refuses the call',
  SERVICE_DISABLED: 'the API is not enabled in the credential\'s project',
  BILLING_DISABLED: 'the billing account of the credential\'s project is disabled',
  CONSUMER_SUSPENDED: 'the credential\'s project or key is suspended',
  CONSUMER_INVALID: 'the credential\'s project is invalid or deleted',
  USER_PROJECT_DENIED: 'the credential may not use its quota project',
  ACCESS_TOKEN_EXPIRED: 'the access token has expired',
  ACCESS_TOKEN_SCOPE_INSUFFICIENT: 'the access token lacks the scope the API needs',
  ACCESS_TOKEN_TYPE_UNSUPPORTED: 'the access token is of a type the API does not take',
  ACCOUNT_STATE_INVALID: 'the account behind the token is disabled or deleted',
  CREDENTIALS_MISSING: 'the call carried no credential',
  IAM_PERMISSION_DENIED: 'the credential lacks the IAM permission on its project',
}

/** What an upstream failure means for the credential that made the call. */
export type FailureKind = 'credential' | 'rate_limited' | 'caller'

/**
 * A 429 is `rate_limited`; a refresh answered invalid_grant (UPSTREAM_CREDENTIALS_UNUSABLE), any 401 (the client has
 * already refreshed the token once), and any answer carrying a reason of CREDENTIAL_FAULT_REASONS are `credential`;
 * everything else, a 403 or 404 without such a reason included, is `caller`.
 */
export function failureKind (err: GatehouseError): FailureKind {
  if (err.upstreamStatus === 429) return 'rate_limited'
  if (err.code === 'UPSTREAM_CREDENTIALS_UNUSABLE' || err.upstreamStatus === 401) return 'credential'
  return credentialFaultReason(err) !== undefined ? 'credential' : 'caller'
}

/** The first reason of CREDENTIAL_FAULT_REASONS in the error's body, if any. */
export function credentialFaultReason (err: GatehouseError): string | undefined {
  return errorReasons(err.upstreamBody).find(r => Object.hasOwn(CREDENTIAL_FAULT_REASONS, r))
}
