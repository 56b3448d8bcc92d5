// GET /messages (Queen's message browser, docs/api.md#messages): newest first, no payloads, no
// total. The log holds ids and transactionIds inside compressed frames, so a page decodes segments,
// but only those queen.list_messages picked for it: at most offset + limit matching messages'
// worth.
import type { MessageListRow } from '../db/rows.js';
import type { Queryable } from '../db/types.js';
import type { TenantContext } from './context.js';
import { messageStatus, modeType, type MessageStatus } from './message-status.js';
import { browsedMessage, browserAnswer, messageArray, storedMessage } from './message-view.js';
import { decodeSegmentRow } from './segments.js';

export interface MessageFilter {
  queue?: string;
  partition?: string;
  namespace?: string;
  task?: string;
  status?: MessageStatus;
  /** Default an hour ago. */
  from?: string;
  /** Rounded up to the end of its minute, as Queen does; default now. */
  to?: string;
  limit: number;
  offset: number;
}

/** Returns the response JSON text. */
export async function listMessages(db: Queryable, ctx: TenantContext, f: MessageFilter): Promise<string> {
  const { tenant } = ctx;
  const rows = await db.query<MessageListRow>(
    `SELECT * FROM queen.list_messages(p_tenant => $1, p_queue => $2, p_partition => $3, p_namespace => $4, p_task => $5,
                                       p_status => $6, p_from => $7::timestamptz, p_to => $8::timestamptz, p_need => $9)`,
    [
      tenant,
      f.queue ?? null,
      f.partition ?? null,
      f.namespace ?? null,
      f.task ?? null,
      f.status ?? null,
      f.from ?? null,
      f.to ?? null,
      f.offset + f.limit,
    ],
  );
  const messages: string[] = [];
  let skip = f.offset;
  let mode = { hasQueueMode: false, busGroupsCount: 0 };
  for (const r of rows) {
    if (r.kind === 'mode') {
      mode = r.mode;
      continue;
    }
    const dead = new Set(r.dlq.map(Number));
    const frames = decodeSegmentRow(r, Number(r.base_offset), Number(r.end_offset), r.partition_id).reverse();
    for (const m of frames) {
      if (messages.length >= f.limit) break;
      const view = messageStatus(r, m.offset, dead.has(m.offset));
      if (f.status && view.status !== f.status) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      messages.push(
        browsedMessage(storedMessage(m, r.created_at), {
          partitionId: r.partition_id,
          queuePath: `${r.queue}/${r.partition}`,
          queue: r.queue,
          partition: r.partition,
          namespace: r.namespace,
          task: r.task,
          ...view,
          queuePriority: r.priority,
        }),
      );
    }
  }
  return browserAnswer({ messages: messageArray(messages), mode: { ...mode, type: modeType(mode.hasQueueMode, mode.busGroupsCount) } });
}
