// @ts-check
import { formatEth } from './dom.js';

/**
 * A policy's rules (src/policies/policySchema.ts) to and from the editor's fields, and in words for the list. No
 * validation here: the server's schema is the one judge, and its message names the field (fieldForPath). Pure
 * functions, importable without a browser (test/dashboardApi.test.ts).
 *
 * @typedef {{ scope: string, unit: string, limit: string, resets: string }} CapValues
 * @typedef {{ address: string, selectors: string }} ContractValues
 * @typedef {{ name: string, active: boolean, chains: string, startsAt: string, endsAt: string, allow: string, block: string, sponsorDeployment: boolean, maxFeePerGas: string, caps: CapValues[], contracts: ContractValues[] }} FormValues
 */

/** Words of a list typed one per line or separated by commas or spaces. @param {string} text */
const words = (text) => text.split(/[\s,]+/).filter((w) => w !== '');

/** "2026-11-26T13:08:00" (a datetime-local value, the browser's zone) as Unix seconds. @param {string} local */
const toUnix = (local) => Math.floor(new Date(local).getTime() / 1000);

/** Unix seconds as a datetime-local value in the browser's zone. @param {unknown} unix */
function toLocal(unix) {
  if (typeof unix !== 'number') return '';
  const d = new Date(unix * 1000);
  const p = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * The rules the form says, in the API's shape. An empty field is an absent rule; what is typed is sent as typed
 * (a chain id that is not a number goes as a string, so the server names it).
 * @param {FormValues} v @returns {Record<string, unknown>}
 */
export function readRules(v) {
  /** @type {Record<string, unknown>} */
  const rules = {};
  if (v.startsAt !== '') rules.startsAt = toUnix(v.startsAt);
  if (v.endsAt !== '') rules.endsAt = toUnix(v.endsAt);
  const chainIds = words(v.chains).map((c) => (/^\d{1,15}$/.test(c) ? Number(c) : c));
  if (chainIds.length > 0) rules.chainIds = chainIds;
  const allow = words(v.allow);
  const block = words(v.block);
  if (allow.length > 0 || block.length > 0) {
    rules.senders = { ...(allow.length > 0 ? { allow } : {}), ...(block.length > 0 ? { block } : {}) };
  }
  // Every row is sent, a blank one too (the server names it): the indexes in its messages are the rows'.
  const contracts = v.contracts.map((c) => {
    const selectors = words(c.selectors);
    return { address: c.address.trim(), ...(selectors.length > 0 ? { selectors } : {}) };
  });
  if (contracts.length > 0) rules.contracts = contracts;
  // Absent means true: only a refusal is written.
  if (!v.sponsorDeployment) rules.sponsorDeployment = false;
  if (v.maxFeePerGas.trim() !== '') rules.maxFeePerGas = v.maxFeePerGas.trim();
  if (v.caps.length > 0) {
    // A per-op cap has no window: its resets is left out (the schema's default, never).
    rules.caps = v.caps.map((c) => ({
      scope: c.scope,
      unit: c.unit,
      limit: c.limit,
      ...(c.scope === 'op' ? {} : { resets: c.resets }),
    }));
  }
  return rules;
}

/**
 * A policy (or rules pasted as JSON) as the form's values.
 * @param {{ name: string, active: boolean, rules: Record<string, unknown> }} p @returns {FormValues}
 */
export function formValuesOf(p) {
  const r = /** @type {Record<string, any>} */ (p.rules);
  const list = (/** @type {unknown} */ v) => (Array.isArray(v) ? v.map(String).join('\n') : '');
  return {
    name: p.name,
    active: p.active,
    chains: Array.isArray(r.chainIds) ? r.chainIds.join(', ') : '',
    startsAt: toLocal(r.startsAt),
    endsAt: toLocal(r.endsAt),
    allow: list(r.senders?.allow),
    block: list(r.senders?.block),
    sponsorDeployment: r.sponsorDeployment !== false,
    maxFeePerGas: typeof r.maxFeePerGas === 'string' ? r.maxFeePerGas : '',
    caps: Array.isArray(r.caps)
      ? r.caps.map((/** @type {Record<string, unknown>} */ c) => ({
          scope: String(c.scope ?? 'sender'),
          unit: String(c.unit ?? 'usd'),
          limit: String(c.limit ?? ''),
          resets: String(c.resets ?? 'never'),
        }))
      : [],
    contracts: Array.isArray(r.contracts)
      ? r.contracts.map((/** @type {Record<string, unknown>} */ c) => ({
          address: String(c.address ?? ''),
          selectors: Array.isArray(c.selectors) ? c.selectors.join(', ') : '',
        }))
      : [],
  };
}

/**
 * Which field a server message names, and what to say next to it: "Invalid rules.caps.0.unit: a per-op cap is …"
 * → caps / 0 / unit; "name must not be empty" and "A policy named … already exists" → name. Undefined for a
 * message that names no field (it is shown above the form instead).
 * @param {string} message @returns {{ path: string[], text: string } | undefined}
 */
export function fieldForPath(message) {
  const rules = /^Invalid rules(?:\.([\w.]+))?: (.*)$/s.exec(message);
  if (rules !== null) {
    const path = (rules[1] ?? '').split('.').filter((p) => p !== '');
    const text = rules[2] ?? message;
    if (path.length === 0) return undefined;
    // An address in a list is named by its place, which the owner counts from 1.
    if (path[0] === 'senders' && path[2] !== undefined)
      return { path, text: `address ${Number(path[2]) + 1}: ${text}` };
    if (path[0] === 'chainIds' && path[1] !== undefined) return { path, text: `chain ${Number(path[1]) + 1}: ${text}` };
    if (path[0] === 'contracts' && path[2] === 'selectors' && path[3] !== undefined) {
      return { path: path.slice(0, 3), text: `method ${Number(path[3]) + 1}: ${text}` };
    }
    return { path, text };
  }
  if (/^name /.test(message)) return { path: ['name'], text: message.replace(/^name /, 'The name ') };
  if (/^A policy named .* already exists/.test(message)) return { path: ['name'], text: message };
  return undefined;
}

/** @param {string} n @param {string} one @param {string} [many] */
const count = (n, one, many = `${one}s`) => `${n} ${n === '1' ? one : many}`;

/** A cap's limit in words: "5 USD", "0.01 ETH", "100 ops". @param {Record<string, unknown>} c */
function capLimit(c) {
  const limit = String(c.limit ?? '');
  if (c.unit === 'usd') return `${limit} USD`;
  if (c.unit === 'wei') return /^\d+$/.test(limit) ? formatEth(limit) : `${limit} wei`;
  return count(limit, 'op');
}

/**
 * The rules in words, one phrase per rule, for the policies' list.
 * @param {Record<string, any>} r @returns {string[]}
 */
export function rulesSummary(r) {
  /** @type {string[]} */
  const out = [];
  if (Array.isArray(r.chainIds)) out.push(`chains ${r.chainIds.join(', ')}`);
  if (typeof r.startsAt === 'number') out.push(`from ${new Date(r.startsAt * 1000).toLocaleString()}`);
  if (typeof r.endsAt === 'number') out.push(`until ${new Date(r.endsAt * 1000).toLocaleString()}`);
  if (Array.isArray(r.senders?.allow)) out.push(`only ${count(String(r.senders.allow.length), 'sender')}`);
  if (Array.isArray(r.senders?.block)) out.push(`${count(String(r.senders.block.length), 'sender')} blocked`);
  if (Array.isArray(r.contracts)) out.push(`calls to ${count(String(r.contracts.length), 'contract')} only`);
  if (r.sponsorDeployment === false) out.push('no account deployment');
  if (typeof r.maxFeePerGas === 'string') out.push(`max fee ${r.maxFeePerGas} wei/gas`);
  for (const c of Array.isArray(r.caps) ? r.caps : []) {
    const who = c.scope === 'dapp' ? 'dApp' : c.scope === 'op' ? 'per op' : `per ${c.scope}`;
    const resets = c.scope === 'op' || (c.resets ?? 'never') === 'never' ? '' : ` ${c.resets}`;
    out.push(`${who} ≤ ${capLimit(c)}${resets}`);
  }
  // The gating rules (policyGatingRows.js): what the holder must own, read on chain.
  const whose = (/** @type {Record<string, unknown>} */ g) => (g.subject === 'user' ? 'user' : 'sender');
  if (r.nft)
    out.push(
      `${whose(r.nft)} holds ≥ ${r.nft.minCount ?? '1'} ${r.nft.standard === 'erc1155' ? 'ERC-1155' : 'ERC-721'}`,
    );
  if (r.attestation) out.push(`${whose(r.attestation)} attested (EAS)`);
  if (r.minBalance)
    out.push(
      `${whose(r.minBalance)} balance ≥ ${r.minBalance.min} ${r.minBalance.token === 'native' ? 'wei' : 'units'}`,
    );
  return out.length === 0 ? ['no rules: admits every request'] : out;
}
