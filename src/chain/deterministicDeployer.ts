import { type Address, concat, getAddress, getContractAddress, type Hash, type Hex, numberToHex } from 'viem';
import { type DevClient, hasCode, waitForSuccess } from './devClient.js';

/**
 * CREATE2 factories that the canonical account-abstraction deployments came from. Both run the same code
 * (Safe's singleton factory is a redeployment of Arachnid's proxy under a key Safe controls), which takes
 * `salt ‖ initcode` as calldata and returns the new address.
 * - Arachnid's proxy: the EntryPoints, SimpleAccountFactory, Simple7702Account, Safe's 4337 module.
 * - Safe's singleton factory: Safe 1.4.1 itself (singleton, proxy factory, MultiSend).
 */
export const DETERMINISTIC_DEPLOYER: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
export const SAFE_SINGLETON_FACTORY: Address = '0x914d7Fec6aaC8cd542e72Bca78B30650d45643d7';

const CREATE2_PROXY_RUNTIME: Hex =
  '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3';

export interface DeterministicDeployment {
  readonly salt: Hex;
  /** Initcode with its constructor arguments appended. */
  readonly bytecode: Hex;
  /** Names the contract in errors. */
  readonly what: string;
  /** Where it must land; a miss means the package version is not the one the address was made from. */
  readonly expected?: Address;
  /** Defaults to DETERMINISTIC_DEPLOYER. */
  readonly deployer?: Address;
}

/** Where `deployment` lands (computed in JS; the deployment itself never needs it). */
export function deterministicAddress(deployment: DeterministicDeployment): Address {
  const { salt, bytecode, deployer = DETERMINISTIC_DEPLOYER } = deployment;
  return getContractAddress({ opcode: 'CREATE2', from: deployer, salt, bytecode });
}

/**
 * CREATE2 through a deterministic deployer, installed with hardhat_setCode (so no pre-signed transaction is
 * needed). Returns the address; sends nothing when it already has code.
 *
 * Speed matters here (this runs in every startDevChain): hashing 20 KB of initcode in JavaScript costs ~5 ms
 * and signing a transaction that carries it ~15 ms, against ~2 ms for the whole deployment done by the node.
 * So the address is checked on chain instead of predicted (with `expected`: code there afterwards; without:
 * the deployer's answer to an eth_call), and the transaction is sent by the node for the client's own account
 * (hardhat_impersonateAccount) rather than signed locally. The sender and the result are the same.
 */
export async function deployDeterministic(client: DevClient, deployment: DeterministicDeployment): Promise<Address> {
  const { salt, bytecode, what, expected } = deployment;
  if (expected !== undefined && (await hasCode(client, expected))) return expected;
  const deployer = deployment.deployer ?? DETERMINISTIC_DEPLOYER;
  if (!(await hasCode(client, deployer))) await client.setCode({ address: deployer, bytecode: CREATE2_PROXY_RUNTIME });
  const data = concat([salt, bytecode]);
  const from = client.account.address;
  let address = expected;
  if (address === undefined) {
    // The proxy returns the new address as 20 raw bytes; a revert here means it is taken already.
    const { data: returned } = await client
      .call({ account: from, to: deployer, data })
      .catch(() => ({ data: undefined }));
    if (returned === undefined || returned.length !== 42) {
      const predicted = deterministicAddress(deployment);
      if (await hasCode(client, predicted)) return predicted;
      throw new Error(`${what}: the deterministic deployer refused it`);
    }
    address = getAddress(returned);
  }
  const hash = await sendFromNode(client, { to: deployer, data, gas: 15_000_000n });
  await waitForSuccess(client, hash, `${what} deployment`);
  if (!(await hasCode(client, address))) {
    const landed = deterministicAddress(deployment);
    throw new Error(`${what} deployed to ${landed}, not ${address}: wrong package version?`);
  }
  return address;
}

/**
 * Sends a transaction from the client's account, signed by the node: directly when the client's account is
 * a JSON-RPC one already (startDevChain's setup client, whose owner is impersonated throughout), otherwise
 * impersonating the account for this one transaction.
 */
export async function sendFromNode(client: DevClient, tx: { to: Address; data: Hex; gas: bigint }): Promise<Hash> {
  const from = client.account.address;
  const send = () =>
    client.request({
      method: 'eth_sendTransaction',
      params: [{ from, to: tx.to, data: tx.data, gas: numberToHex(tx.gas) }],
    });
  if (client.account.type !== 'local') return send();
  await client.impersonateAccount({ address: from });
  try {
    return await send();
  } finally {
    await client.stopImpersonatingAccount({ address: from });
  }
}

/** An address as solc inlines an `address immutable` into runtime code: one left-padded 32-byte word. */
export function addressWord(address: Address): string {
  return address.slice(2).toLowerCase().padStart(64, '0');
}

/**
 * Replaces every occurrence of the 32-byte word `from` (64 hex digits) in runtime `code` by `to`, at byte
 * boundaries, and throws unless there was at least one: an immutable that is not where we expect it means the
 * build changed, and a silent miss would leave a contract that trusts the wrong address.
 */
export function replaceWord(code: Hex, from: string, to: string, what: string): Hex {
  const hex = code.slice(2).toLowerCase();
  let out = '';
  let count = 0;
  let copied = 0;
  for (let at = hex.indexOf(from); at !== -1; at = hex.indexOf(from, at + 1)) {
    if (at % 2 !== 0 || at < copied) continue;
    out += hex.slice(copied, at) + to;
    copied = at + from.length;
    count++;
  }
  if (count === 0) throw new Error(`${what}: not found in the runtime code`);
  return `0x${out}${hex.slice(copied)}`;
}

/** The runtime code at `address`; throws when there is none. */
export async function codeAt(client: DevClient, address: Address): Promise<Hex> {
  const code = await client.getCode({ address });
  if (code === undefined || code === '0x') throw new Error(`no code at ${address}`);
  return code;
}
