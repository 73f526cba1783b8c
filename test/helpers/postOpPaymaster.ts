import { createRequire } from 'node:module';
import { type Address, getAddress, type Hex, parseAbi } from 'viem';
import { type DevClient, waitForSuccess } from '../../src/chain/devClient.js';

/**
 * A paymaster for tests of v0.7+ estimation: it accepts every op, returns a non-empty context so postOp runs,
 * and its postOp writes `postOpWrites` fresh storage slots (~22,000 gas each), so the unused-gas penalty on
 * the postOp limit (v0.8+: separate, above 40,000 unused) is exercised. paymasterData starting with 0xff
 * makes validation revert with Error("test paymaster refuses"), for the AA33 naming test. Compiled at test
 * time with the project's solc (no artifact is kept), once per process.
 */
const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;
struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits;
  uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }
contract PostOpPaymaster {
  uint256 public immutable postOpWrites;
  uint256 public written;
  mapping(uint256 => uint256) private sink;
  constructor(uint256 writes) { postOpWrites = writes; }
  function validatePaymasterUserOp(PackedUserOperation calldata op, bytes32, uint256)
    external pure returns (bytes memory context, uint256 validationData) {
    require(op.paymasterAndData.length <= 52 || op.paymasterAndData[52] != 0xff, "test paymaster refuses");
    return (hex"01", 0);
  }
  function postOp(uint8, bytes calldata, uint256, uint256) external {
    uint256 n = written;
    for (uint256 i = 0; i < postOpWrites; i++) sink[n + i] = 1;
    written = n + postOpWrites;
  }
}`;

export const postOpPaymasterAbi = parseAbi([
  'constructor(uint256 writes)',
  'function written() view returns (uint256)',
]);

let compiled: Hex | undefined;

function bytecode(): Hex {
  if (compiled !== undefined) return compiled;
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'PostOpPaymaster.sol': { content: SOURCE } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
        },
      }),
    ),
  ) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const object = output.contracts['PostOpPaymaster.sol']?.PostOpPaymaster?.evm.bytecode.object;
  if (object === undefined) throw new Error('solc produced no PostOpPaymaster');
  compiled = `0x${object}`;
  return compiled;
}

/** Deploys one and deposits `deposit` for it at `entryPoint`. */
export async function deployPostOpPaymaster(
  client: DevClient,
  params: { readonly entryPoint: Address; readonly postOpWrites: bigint; readonly deposit: bigint },
): Promise<Address> {
  const hash = await client.deployContract({
    abi: postOpPaymasterAbi,
    bytecode: bytecode(),
    args: [params.postOpWrites],
  });
  const receipt = await waitForSuccess(client, hash, 'PostOpPaymaster deployment');
  if (receipt.contractAddress == null) throw new Error('no contract address');
  const paymaster = getAddress(receipt.contractAddress);
  const deposit = await client.writeContract({
    address: params.entryPoint,
    abi: parseAbi(['function depositTo(address account) payable']),
    functionName: 'depositTo',
    args: [paymaster],
    value: params.deposit,
  });
  await waitForSuccess(client, deposit, 'paymaster deposit');
  return paymaster;
}
