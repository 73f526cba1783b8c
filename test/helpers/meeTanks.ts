import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Address, Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { jsCryptoBackend } from '../../src/crypto/cryptoBackend.js';
import { newTankId } from '../../src/mee/createGasTank.js';
import { encryptKeystore } from '../../src/paymaster/signer/keystore.js';
import type { Store } from '../../src/store/store.js';
import type { MeeTank, NewMeeTank } from '../../src/store/tenants/meeTankRepository.js';

/** A gas tank row for a dApp, straight into the store (the route tests need one to address; no chain involved). */
export async function insertTestTank(
  store: Pick<Store, 'meeTanks'>,
  dappId: string,
  over: Partial<NewMeeTank> = {},
): Promise<MeeTank> {
  return store.meeTanks.create({
    id: newTankId(),
    dappId,
    chainId: 31337,
    address: `0x${randomBytes(20).toString('hex')}` as Address,
    token: `0x${'0a'.repeat(20)}`,
    tokenDecimals: 6,
    meeVersion: '2.2.1',
    signer: { kind: 'kms', keyId: 'alias/test-tank' },
    owner: `0x${'0b'.repeat(20)}`,
    lowBalance: undefined,
    createdAt: Date.now(),
    ...over,
  });
}

/**
 * A tank owner's key as an encrypted keystore in `dir` (scrypt N 2^12: a test's, not a deployment's) with its password
 * file, and the signer reference naming them.
 */
export function writeTankKeystore(args: { readonly dir: string; readonly privateKey: Hex; readonly name?: string }): {
  readonly signer: { kind: 'keystore'; path: string; password: { file: string } };
} {
  const name = args.name ?? 'tank';
  const keystoreFile = path.join(args.dir, `${name}.json`);
  const passwordFile = path.join(args.dir, `${name}.pass`);
  const keystore = encryptKeystore({
    privateKey: Buffer.from(args.privateKey.slice(2), 'hex'),
    password: `${name} password`,
    address: privateKeyToAddress(args.privateKey),
    crypto: jsCryptoBackend,
    scryptN: 2 ** 12,
  });
  fs.writeFileSync(keystoreFile, JSON.stringify(keystore));
  fs.writeFileSync(passwordFile, `${name} password\n`);
  return { signer: { kind: 'keystore', path: keystoreFile, password: { file: passwordFile } } };
}
