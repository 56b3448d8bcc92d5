// The rows the broker's SQL functions (drizzle/) return, as the drivers hand them back: int8 as a
// decimal string, bytea as Uint8Array, timestamptz as Date. Push and ack answer "ask again" rows
// when SQL cannot finish alone (it never decompresses a segment,
// docs/architecture.md#what-sql-cannot-see).

/** The columns of a log_segments row that decoding needs. */
export type SegmentRow = {
  base_offset: string;
  end_offset: string;
  blob: Uint8Array;
};

/**
 * queen.push_segments: either one `ok` row per group (everything was written), or rows saying
 * what to fix, and then nothing was written.
 *
 * | kind    | columns                        | means                                              | TypeScript then                            |
 * | ------- | ------------------------------ | -------------------------------------------------- | ------------------------------------------ |
 * | ok      | grp, partition_id, base_offset | group grp was written at base_offset               | item k of the group is at base_offset + k  |
 * | dup     | grp, item, partition_id, msg_offset, base_offset | frame `item` of group grp repeats a transactionId stored at msg_offset, in the segment at base_offset | answers it as a duplicate, drops it, calls again |
 * | seg     | partition_id, base_offset, blob (null: retention took it) | a segment holding some dup's original | reads the original message ids from it |
 * | encrypt | grp, partition_id              | the queue encrypts; the group was sent in plaintext | re-encodes the group encrypted, calls again |
 * | plain   | grp, partition_id              | the queue stores plaintext; the group was encrypted | re-encodes the group in plaintext, calls again |
 * | expand  | grp, partition_id              | dedup is off but repeats inside the request were collapsed | sends every item, calls again      |
 *
 * grp is the 0-based index into the groups sent; item is 0-based within the group's frames.
 */
export type PushRow = PushWrittenRow | PushDuplicateRow | PushSegmentRow | PushFixRow;

export type PushWrittenRow = {
  kind: 'ok';
  grp: number;
  item: null;
  partition_id: string;
  msg_offset: null;
  base_offset: string;
  blob: null;
};

export type PushDuplicateRow = {
  kind: 'dup';
  grp: number;
  item: number;
  partition_id: string;
  msg_offset: string;
  base_offset: string;
  blob: null;
};

export type PushSegmentRow = {
  kind: 'seg';
  grp: null;
  item: null;
  partition_id: string;
  msg_offset: null;
  base_offset: string;
  blob: Uint8Array | null;
};

export type PushFixRow = {
  kind: 'encrypt' | 'plain' | 'expand';
  grp: number;
  item: null;
  partition_id: string;
  msg_offset: null;
  base_offset: null;
  blob: null;
};

/**
 * queen.pop: the claimed partitions' whole segment rows, in claim order and then segment order;
 * claim numbers the claimed partitions from 1 and the columns up to attempt repeat on each of a
 * claim's rows. TypeScript decodes the offsets [from_offset, batch_end] of each claim and, when
 * the response cap cuts that short, calls queen.pop_shrink to lease only what it returned.
 */
export type PopRow = SegmentRow & {
  claim: number;
  queue_name: string;
  partition_id: string;
  partition_name: string;
  from_offset: string;
  batch_end: string;
  attempt: number;
  created_at: Date;
};

/**
 * queen.ack: per cursor (partition, group) of the items, either every item's result or `need`
 * rows, and then nothing of that cursor was written; the broker calls again with what was asked for.
 *
 * | need   | columns                                  | means                                  | TypeScript then                          |
 * | ------ | ---------------------------------------- | -------------------------------------- | ---------------------------------------- |
 * | null   | idx, success, error, queue_name, partition_name, lease_released, dlq, skipped, committed, already_committed, msg_offset | the result of item idx | reports it |
 * | decode | need_partition, need_items, need_from, need_to, and a segment (one row each) | the sidecar hashes of [need_from, need_to] were purged | finds the lowest offset of each of need_items' ids in the segments and sends offsets (an id found nowhere: no hash, no offset, "Message not found") |
 * | frame  | need_partition, need_from (= need_to), and the segment holding it | the cursor dead-letters offset need_from | decodes that frame and sends it as the f_* parameters |
 */
export type AckRow = AckResultRow | AckNeedRow;

export type AckResultRow = {
  need: null;
  idx: number;
  success: boolean | null;
  error: string | null;
  queue_name: string | null;
  partition_name: string | null;
  lease_released: boolean | null;
  dlq: boolean | null;
  skipped: boolean | null;
  committed: boolean | null;
  /** At or below the cursor before this call: a no-op success (a retried ack). */
  already_committed: boolean | null;
  msg_offset: string | null;
};

export type AckNeedRow = SegmentRow & {
  need: 'decode' | 'frame';
  idx: null;
  need_partition: string;
  /** decode: the request indices whose transactionIds are to be searched; frame: null. */
  need_items: number[] | null;
  need_from: string;
  need_to: string;
  created_at: Date;
};

/**
 * queen.message_marks: where a partition's message-level status changes along its offsets. An
 * offset at or below completed_to is completed, up to processing_to processing, else pending; a
 * dead-lettered one is dead_letter. bus holds each named group's effective cursor.
 */
export type MessageMarks = {
  queue_mode: boolean;
  completed_to: string;
  processing_to: string;
  lease_expires_at: Date | null;
  bus: string[];
};

/** queen.message_marks' whole row: the marks, and the named groups in bus's order (list_messages counts them). */
export type MessageMarksRow = MessageMarks & { bus_groups: string[] };

/**
 * queen.list_messages: the segments a page of GET /messages needs, newest first, then one `mode`
 * row. TypeScript decodes each segment's frames (newest offset first), keeps those whose status
 * matches, skips the page offset and stops at the limit.
 *
 * | kind | columns                                                             |
 * | ---- | ------------------------------------------------------------------- |
 * | seg  | the partition's names and marks, a segment, dlq (its dead-lettered offsets) |
 * | mode | mode: {hasQueueMode, busGroupsCount} over the window's partitions    |
 */
export type MessageListRow = MessageSegmentRow | MessageModeRow;

export type MessageSegmentRow = SegmentRow &
  MessageMarks & {
    kind: 'seg';
    partition_id: string;
    queue: string;
    partition: string;
    namespace: string | null;
    task: string | null;
    priority: number;
    created_at: Date;
    dlq: string[];
    mode: null;
  };

export type MessageModeRow = {
  kind: 'mode';
  mode: { hasQueueMode: boolean; busGroupsCount: number };
};

/**
 * The queen.* function each row type above is the answer of, by name (every overload answers the
 * same). test/db/rows.test.ts holds each against the function's result columns, so a column added,
 * renamed or retyped on either side fails there.
 */
export type FunctionRows = {
  push_segments: PushRow;
  pop: PopRow;
  ack: AckRow;
  message_marks: MessageMarksRow;
  list_messages: MessageListRow;
};
