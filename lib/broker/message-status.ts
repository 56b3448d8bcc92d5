// A message's status as Queen's message routes report it, from its partition's marks (queen.message_marks,
// the one place the rule lives) and whether any group dead-lettered it. Shared by the list and the detail.
import type { MessageMarks } from '../db/rows.js';

export const MESSAGE_STATUSES = ['pending', 'processing', 'completed', 'dead_letter'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export function messageStatus(marks: MessageMarks, offset: number, deadLettered: boolean) {
  const status: MessageStatus = deadLettered
    ? 'dead_letter'
    : offset <= Number(marks.completed_to)
      ? 'completed'
      : offset <= Number(marks.processing_to)
        ? 'processing'
        : 'pending';
  const bus = marks.bus.map(Number);
  return {
    status,
    // The queue-mode verdict alone: without a queue-mode reader nothing has consumed it in that sense.
    queueStatus: marks.queue_mode || deadLettered ? status : ('pending' as MessageStatus),
    busStatus: { consumedBy: bus.filter((committed) => committed >= offset).length, totalGroups: bus.length },
    leaseExpiresAt: status === 'processing' && marks.lease_expires_at ? marks.lease_expires_at.toISOString() : null,
  };
}

/** Queen's `mode.type`: which kinds of readers the partitions have. */
export const modeType = (hasQueueMode: boolean, busGroupsCount: number) =>
  hasQueueMode ? (busGroupsCount > 0 ? 'hybrid' : 'queue') : busGroupsCount > 0 ? 'bus' : 'none';
