import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import { z } from 'zod';
import { type TankSignerRef, tankSignerRefSchema } from '../../config/tankSignerRef.js';
import { ConflictError } from '../../errors/PatronError.js';
import type { Database, MeeGasTanksTable } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';

/**
 * Biconomy MEE gas tanks (table mee_gas_tanks, migration 0029; docs/guides/mee-gas-tanks.md): a Nexus account
 * holding an ERC-20 whose owner key Patron holds, sponsoring one dApp. Addresses are lower-case here, whatever the
 * caller gave. A retired tank keeps its row (its address stays taken, and stays in `allAddresses`): a tank that may
 * still hold money is never forgotten, and no later tank can take its address.
 */
export type MeeTankStatus = 'active' | 'retired';

export interface MeeTank {
  readonly id: string;
  /** The one dApp allowed to sponsor from it. */
  readonly dappId: string;
  readonly chainId: number;
  readonly address: Address;
  readonly token: Address;
  readonly tokenDecimals: number;
  /** abstractjs's MEEVersion ("2.2.1"): which Nexus factory and validator the address belongs to. */
  readonly meeVersion: string;
  readonly signer: TankSignerRef;
  /** The owner key's address (the K1 validator's owner). */
  readonly owner: Address;
  readonly status: MeeTankStatus;
  /** Alert under this balance, in the token's base units; undefined: no alert. */
  readonly lowBalance: bigint | undefined;
  readonly createdAt: number;
  readonly retiredAt: number | undefined;
}

export type NewMeeTank = Omit<MeeTank, 'status' | 'retiredAt'>;

export interface MeeTankRepository {
  /** Throws ConflictError when a tank at that address on that chain is already registered (by any dApp). */
  create(tank: NewMeeTank): Promise<MeeTank>;
  get(id: string): Promise<MeeTank | undefined>;
  findByAddress(args: { readonly chainId: number; readonly address: string }): Promise<MeeTank | undefined>;
  /** The dApp's tanks, oldest first, retired ones too. */
  listForDapp(dappId: string): Promise<readonly MeeTank[]>;
  /** Every tank, oldest first (the operator's view). */
  list(): Promise<readonly MeeTank[]>;
  /** Every tank address Patron holds, any chain, any status, lower-case. */
  allAddresses(): Promise<ReadonlySet<string>>;
  /** Marks an active tank retired; undefined when there is no such tank, the tank as it is when already retired. */
  retire(args: { readonly id: string; readonly now: number }): Promise<MeeTank | undefined>;
  /** Sets (or, with undefined, clears) the alert threshold; undefined when there is no such tank. */
  setLowBalance(args: { readonly id: string; readonly lowBalance: bigint | undefined }): Promise<MeeTank | undefined>;
}

const statusSchema = z.enum(['active', 'retired']);
const lower = (a: string) => a.toLowerCase() as Address;

function toTank(r: MeeGasTanksTable): MeeTank {
  return {
    id: r.id,
    dappId: r.dapp_id,
    chainId: Number(r.chain_id),
    address: lower(r.address),
    token: lower(r.token),
    tokenDecimals: Number(r.token_decimals),
    meeVersion: r.mee_version,
    signer: tankSignerRefSchema.parse(JSON.parse(r.signer)),
    owner: lower(r.owner),
    status: statusSchema.parse(r.status),
    lowBalance: r.low_balance_wei === null ? undefined : BigInt(r.low_balance_wei),
    createdAt: Number(r.created_at),
    retiredAt: r.retired_at === null ? undefined : Number(r.retired_at),
  };
}

export function createMeeTankRepository(db: Kysely<Database>): MeeTankRepository {
  const get = async (id: string) => {
    const row = await db.selectFrom('mee_gas_tanks').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toTank(row);
  };
  return {
    async create(t) {
      const row: MeeGasTanksTable = {
        id: t.id,
        dapp_id: t.dappId,
        chain_id: t.chainId,
        address: lower(t.address),
        token: lower(t.token),
        token_decimals: t.tokenDecimals,
        mee_version: t.meeVersion,
        // Parsed again so nothing but a reference (no stray field, no key) is ever written.
        signer: JSON.stringify(tankSignerRefSchema.parse(t.signer)),
        owner: lower(t.owner),
        status: 'active',
        low_balance_wei: t.lowBalance === undefined ? null : t.lowBalance.toString(),
        created_at: t.createdAt,
        retired_at: null,
      };
      try {
        await db.insertInto('mee_gas_tanks').values(row).execute();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        // Which dApp holds it is not said: the caller may be another tenant.
        throw new ConflictError(`a gas tank at ${row.address} on chain ${t.chainId} is already registered`);
      }
      return toTank(row);
    },

    get,

    async findByAddress({ chainId, address }) {
      const row = await db
        .selectFrom('mee_gas_tanks')
        .selectAll()
        .where('chain_id', '=', chainId)
        .where('address', '=', address.toLowerCase())
        .executeTakeFirst();
      return row === undefined ? undefined : toTank(row);
    },

    async listForDapp(dappId) {
      const rows = await db
        .selectFrom('mee_gas_tanks')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toTank);
    },

    async list() {
      const rows = await db.selectFrom('mee_gas_tanks').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toTank);
    },

    async allAddresses() {
      const rows = await db.selectFrom('mee_gas_tanks').select('address').execute();
      return new Set(rows.map((r) => r.address.toLowerCase()));
    },

    async retire({ id, now }) {
      await db
        .updateTable('mee_gas_tanks')
        .set({ status: 'retired', retired_at: now })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .execute();
      return get(id);
    },

    async setLowBalance({ id, lowBalance }) {
      await db
        .updateTable('mee_gas_tanks')
        .set({ low_balance_wei: lowBalance === undefined ? null : lowBalance.toString() })
        .where('id', '=', id)
        .execute();
      return get(id);
    },
  };
}
