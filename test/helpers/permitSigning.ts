import assert from 'node:assert/strict';
import { type Address, concat, type Hex, maxUint256 } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../../src/chain/aaArtifacts.js';
import { type DevClient, waitForSuccess } from '../../src/chain/devClient.js';
import type { EntryPointVersion } from '../../src/chain/entryPoints.js';

/**
 * The EIP-2612 permit as a wallet signs it, written here from the EIP (not from the service's own typed data,
 * which the tests compare with this): USDC's domain {name, version "2", chainId, verifyingContract} and the
 * Permit struct. Plus what the permit tests need around it: an EIP-7702 account (an EOA delegated to the
 * EntryPoint's Simple7702Account, whose ERC-1271 accepts the EOA's raw signature) and the opcodes a call runs.
 */
export const PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

export interface PermitFields {
  readonly token: Address;
  readonly tokenName: string;
  readonly chainId: number;
  readonly owner: Address;
  readonly spender: Address;
  readonly value: bigint;
  readonly nonce: bigint;
  readonly deadline?: bigint;
}

/** The typed data viem's signTypedData takes, deadline the maximum unless given. */
export function permitTypedData(p: PermitFields) {
  return {
    domain: { name: p.tokenName, version: '2', chainId: p.chainId, verifyingContract: p.token },
    types: PERMIT_TYPES,
    primaryType: 'Permit' as const,
    message: {
      owner: p.owner,
      spender: p.spender,
      value: p.value,
      nonce: p.nonce,
      deadline: p.deadline ?? maxUint256,
    },
  };
}

/** The EOA `key` signs the permit's EIP-712 digest (r ‖ s ‖ v). */
export function signPermit(key: Hex, p: PermitFields): Promise<Hex> {
  return privateKeyToAccount(key).signTypedData(permitTypedData(p));
}

/** Deploys the version's Simple7702Account implementation (v0.8's names its EntryPoint in code, v0.9's takes it). */
export async function deploySimple7702(
  client: DevClient,
  version: Exclude<EntryPointVersion, '0.6' | '0.7'>,
  entryPoint: Address,
): Promise<Address> {
  const { abi, bytecode } = loadAccountAbstractionArtifact(version, 'Simple7702Account');
  const hash = await client.deployContract({ abi, bytecode, args: version === '0.8' ? [] : [entryPoint] });
  const address = (await waitForSuccess(client, hash, 'Simple7702Account')).contractAddress;
  assert.ok(address, 'Simple7702Account deployed');
  return address;
}

/** The EOA delegates to `delegate` with a type-4 transaction that `client` (funded) sends and pays for. */
export async function delegateEoa(client: DevClient, eoa: PrivateKeyAccount, delegate: Address): Promise<void> {
  const nonce = await client.getTransactionCount({ address: eoa.address });
  const chainId = await client.getChainId();
  const authorization = await eoa.signAuthorization({ contractAddress: delegate, chainId, nonce });
  const hash = await client.sendTransaction({ authorizationList: [authorization], to: eoa.address, data: '0x' });
  await waitForSuccess(client, hash, '7702 delegation');
  assert.equal(await client.getCode({ address: eoa.address }), concat(['0xef0100', delegate]).toLowerCase());
}

interface StructLog {
  readonly op: string;
  readonly depth: number;
}

/** The opcodes a call executes, with their call depth (debug_traceCall's default struct logger, as EDR has it). */
export async function tracedOpcodes(
  client: DevClient,
  call: { readonly from: Address; readonly to: Address; readonly data: Hex },
): Promise<readonly StructLog[]> {
  const trace = (await client.request({
    method: 'debug_traceCall' as never,
    params: [call, 'latest', {}] as never,
  })) as { failed: boolean; structLogs: StructLog[] };
  assert.equal(trace.failed, false, 'the traced call succeeds');
  return trace.structLogs.map((l) => ({ op: l.op, depth: l.depth }));
}
