import { pimlico_getTokenQuotes } from './methods/pimlico_getTokenQuotes.js';
import { pm_getFeeQuoteOrData } from './methods/pm_getFeeQuoteOrData.js';
import { pm_getPaymasterData } from './methods/pm_getPaymasterData.js';
import { pm_getPaymasterStubData } from './methods/pm_getPaymasterStubData.js';
import { pm_sponsorUserOperation } from './methods/pm_sponsorUserOperation.js';
import { pm_supportedEntryPoints } from './methods/pm_supportedEntryPoints.js';
import { pm_validateSponsorshipPolicies } from './methods/pm_validateSponsorshipPolicies.js';
import type { RegisteredMethod } from './rpcMethod.js';

/** Every JSON-RPC method the paymaster endpoints serve: an explicit list, no autoloading. */
export const PAYMASTER_METHODS: ReadonlyMap<string, RegisteredMethod> = new Map(
  [
    pm_getFeeQuoteOrData,
    pm_sponsorUserOperation,
    pm_getPaymasterStubData,
    pm_getPaymasterData,
    pm_validateSponsorshipPolicies,
    pm_supportedEntryPoints,
    pimlico_getTokenQuotes,
  ].map((m) => [m.method, m]),
);
