/**
 * The commons: the part of the state that executions hold in common (decision 039): memory,
 * files, buffered messages, the message ids seen, the events thrown not yet given on, the audit trail, and bulk
 * operations (a chunk of one changes executions of a partition and its progress here). Any
 * step may write it, whichever execution it runs, so on a database cut into partitions it is
 * journaled in the database's shared partition (-1), which every daemon writes and follows.
 * Each record of it sets or removes entries named by a key, so two daemons' writes of different
 * keys commute, and of one key the later one wins (store/pg/shared-journal.ts).
 */
import type { WfxRecord } from './records.js';

/** The state's top-level keys that hold the commons. */
export const COMMONS_KEYS = ['memory', 'files', 'messages', 'messageIds', 'thrown', 'bulks', 'audit'] as const;

/**
 * The keys of the commons' entries `record` sets or removes; null when it changes none (it
 * belongs to an execution or to partition 0). A key names one entry in one of COMMONS_KEYS.
 */
export function commonsTouched(record: WfxRecord): readonly string[] | null {
  switch (record.type) {
    case 'memory.written':
      // As JSON: any text may be a name, and no two addresses make the same key.
      return [`memory\0${JSON.stringify([record.organization, record.namespace, record.key])}`];
    case 'file.stored':
      return [`file\0${record.file.fileId}`];
    case 'file.kept':
    case 'file.deleted':
      return [`file\0${record.fileId}`];
    case 'files.held':
      return record.fileIds.map((id) => `file\0${id}`);
    case 'message.buffered':
      return [`message\0${record.message.id}`];
    case 'message.removed':
      return [`message\0${record.id}`];
    case 'messageId.seen':
    case 'messageId.expired':
      return [`messageId\0${record.key}`];
    case 'event.thrown':
      return [`thrown\0${record.event.id}`];
    case 'event.passed':
      return [`thrown\0${record.id}`];
    // A bulk operation's own entry, and each lane's apart: its partition's holder alone advances a lane.
    case 'bulk.created':
      return [`bulk\0${record.bulk.bulkId}`];
    case 'bulk.ended':
    case 'bulk.removed':
      return [`bulk\0${record.bulkId}`];
    case 'bulk.selected':
    case 'bulk.progressed':
      return [`bulk\0${record.bulkId}\0${record.lane}`];
    case 'audit.recorded':
      return [`audit\0${record.entry.id}`];
    case 'audit.removed':
      return record.ids.map((id) => `audit\0${id}`);
    default:
      return null;
  }
}

/** The commons as the store's options name it (PgStoreOptions.shared: what goes to the shared partition). */
export const WFX_COMMONS = { keys: COMMONS_KEYS, touched: commonsTouched } as const;
