import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { isDatabaseUnavailable } from '../common/exceptions/database-errors.js';
import { Database } from '../database/index.js';

/**
 * The most deliveries one commit carries. Each is a savepoint, and PostgreSQL keeps only 64
 * subtransactions of a transaction in shared memory before every snapshot check gets slower.
 */
const MAX_GROUP_SIZE = 32;

type Work = (manager: EntityManager) => Promise<unknown>;

interface Delivery {
  order: string;
  work: Work;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Shared commits for webhook deliveries on SQLite, whose one writer makes each commit wait for
 * the one before: a delivery joins the group that is waiting for the writer's turn (the rest of
 * the current turn of the event loop, then Database.transaction()), or starts one. The group is stored and processed in that one
 * transaction, each delivery in a savepoint of its own: a burst costs one commit, not one each.
 *
 * - Each work runs exactly once. One that throws is rolled back to its savepoint, alone; its
 *   caller gets the error, and the others commit.
 * - Callers are answered after the commit: nothing is acknowledged before it is durable. If the
 *   transaction itself fails (the commit, a rollback to a savepoint, a database that does not
 *   answer), every caller of the group gets that error and nothing of the group is kept.
 * - The works of a group run one after the other, in the order of their keys: two groups that
 *   store the same keys (redeliveries on PostgreSQL, where a second insert of a key waits for the
 *   first one's transaction) then wait for each other in one order, never in a cycle.
 */
@Injectable()
export class WebhookCommits {
  /** The group whose transaction has not begun yet: deliveries arriving now join it. */
  private open?: Delivery[];

  constructor(private readonly db: Database) {}

  /** Runs `work` in a shared transaction; resolves to its result once that has committed. */
  run<T>(order: string, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    // Where transactions run side by side (PostgreSQL, whose own group commit shares the WAL
    // flushes), a delivery alone is faster: works of one group run one after the other.
    if (!this.db.writesTakeTurns) return this.db.transaction(work);
    return new Promise<T>((resolve, reject) => {
      const delivery = { order, work, resolve: resolve as (value: unknown) => void, reject };
      if (this.open && this.open.length < MAX_GROUP_SIZE) {
        this.open.push(delivery);
      } else {
        const group = [delivery];
        this.open = group;
        // Started after this turn of the event loop, so that the deliveries read in it join.
        setImmediate(() => void this.commit(group));
      }
    });
  }

  private async commit(group: Delivery[]): Promise<void> {
    const close = () => {
      if (this.open === group) this.open = undefined;
    };
    let outcomes: ({ value: unknown } | { error: unknown })[];
    try {
      outcomes = await this.db.transaction(async (manager) => {
        close();
        // One work alone needs no savepoint: if it throws, the transaction is rolled back.
        if (group.length === 1) return [{ value: await group[0].work(manager) }];
        group.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
        const settled = [];
        for (const { work } of group) settled.push(await inSavepoint(manager, work));
        return settled;
      });
    } catch (error) {
      close();
      for (const delivery of group) delivery.reject(error);
      return;
    }
    outcomes.forEach((outcome, i) => {
      if ('error' in outcome) group[i].reject(outcome.error);
      else group[i].resolve(outcome.value);
    });
  }
}

/**
 * `work` in a savepoint of `manager`'s transaction: its outcome, its writes undone if it threw.
 * Throws (failing the whole group) when the transaction cannot go on: a database that does not
 * answer would wait out its timeout again for the rollback, and a database that abandoned the
 * transaction (SQLite on a full disk) has no savepoint left to roll back to.
 */
async function inSavepoint(
  manager: EntityManager,
  work: Work,
): Promise<{ value: unknown } | { error: unknown }> {
  await manager.query('SAVEPOINT webhook_delivery');
  try {
    const value = await work(manager);
    await manager.query('RELEASE SAVEPOINT webhook_delivery');
    return { value };
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    await manager.query('ROLLBACK TO SAVEPOINT webhook_delivery');
    await manager.query('RELEASE SAVEPOINT webhook_delivery');
    return { error };
  }
}
