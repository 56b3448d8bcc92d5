// The ranges a request must stay within (docs/api.md#validation, docs/api.md#limits), and what an
// absent value means.
export const INT4_MAX = 2_147_483_647;

// Offsets and partition ids are BIGINT; as JSON numbers they are exact only up to 2^53 - 1.
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;
export const MAX_PARTITION_ID = Number.MAX_SAFE_INTEGER;

export const MAX_POP_BATCH = 10_000;
export const MAX_POP_PARTITIONS = 1_000;
export const DEFAULT_POP_TIMEOUT_MS = 30_000;
export const MAX_POP_TIMEOUT_MS = 24 * 3600 * 1000;

export const DEFAULT_EXTEND_SECONDS = 60;
export const MAX_EXTEND_SECONDS = 7 * 24 * 3600;

export const DEFAULT_DLQ_PAGE = 100;
export const MAX_DLQ_PAGE = 1000;

// Traces: stored beside the log, so their size is capped apart from a message's.
export const MAX_TRACE_DATA_BYTES = 64 * 1024;
export const MAX_TRACE_NAMES = 32;
export const MAX_EVENT_TYPE_LENGTH = 100;
export const DEFAULT_TRACE_PAGE = 100;
export const DEFAULT_TRACE_NAMES_PAGE = 50;
export const MAX_TRACE_PAGE = 1000;
export const TRACE_RETENTION_SECONDS = 7 * 24 * 3600;
export const TRACE_PURGE_BATCH = 10_000;

export const DEFAULT_LAGGING_SECONDS = 3600;

// /status/analytics answers one point per interval of its window: a week of minutes at most.
export const MAX_ANALYTICS_POINTS = 7 * 24 * 60;
export const DEFAULT_ANALYTICS_WINDOW_MS = 24 * 3600 * 1000;

// The message browser decodes what a page needs: offset + limit messages' worth of segments.
export const DEFAULT_MESSAGE_PAGE = 200;
export const MAX_MESSAGE_PAGE = 1000;
export const MAX_MESSAGE_DEPTH = 10_000;

export const MAX_DLQ_OFFSET = Number.MAX_SAFE_INTEGER;
