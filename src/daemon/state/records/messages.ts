/**
 * Records of messages and events kept in the live state: a message buffered until a node
 * waits for it, the message ids seen (so a resend is a duplicate), and the events an execution
 * threw that other daemons sharing the database have not had yet.
 */
import type { BufferedMessage, PendingThrow } from '../state.js';
import type { Handlers } from './handlers.js';

/** The records of kept messages and events (WfxRecord). */
export type MessageRecord =
  | { readonly type: 'message.buffered'; readonly message: BufferedMessage }
  | { readonly type: 'message.removed'; readonly id: string }
  | { readonly type: 'messageId.seen'; readonly key: string; readonly until: string }
  | { readonly type: 'messageId.expired'; readonly key: string }
  /** An event an execution threw, kept until every other daemon sharing the database has it. */
  | { readonly type: 'event.thrown'; readonly event: PendingThrow }
  | { readonly type: 'event.passed'; readonly id: string };

/** The reducer's part for kept messages and events (records.ts). */
export const messageHandlers: Handlers<MessageRecord> = {
  'message.buffered': (state, r) => {
    state.messages[r.message.id] = r.message;
  },
  'message.removed': (state, r) => {
    delete state.messages[r.id];
  },
  'messageId.seen': (state, r) => {
    state.messageIds[r.key] = r.until;
  },
  'messageId.expired': (state, r) => {
    delete state.messageIds[r.key];
  },
  'event.thrown': (state, r) => {
    state.thrown[r.event.id] = r.event;
  },
  'event.passed': (state, r) => {
    delete state.thrown[r.id];
  },
};
