// `perf` over a set of processes for one window, summarised by where the on-CPU samples fall.
// cpu-clock (a software timer) is what this VM offers: no hardware counters.
import { execFileSync, spawn } from 'node:child_process';

export async function perfRecord(pids: readonly number[], seconds: number, data: string): Promise<void> {
  const child = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', '999', '-g', '-o', data, '-p', pids.join(','), '--', 'sleep', String(seconds)],
    { stdio: 'ignore' },
  );
  await new Promise((r) => child.once('exit', r));
}

/** Percent of samples per symbol, self (`--no-children`) or inclusive (`--children`). */
export function perfSymbols(data: string, inclusive: boolean): Map<string, number> {
  const text = execFileSync(
    'perf',
    ['report', '-i', data, '--stdio', inclusive ? '--children' : '--no-children', '--sort', 'dso,symbol', '-g', 'none'],
    {
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  ).toString();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    // "  12.34%  0.56%  dso  [.] symbol" (inclusive) or "  12.34%  dso  [.] symbol"
    const m = /^\s*([\d.]+)%\s+(?:[\d.]+%\s+)?(\S+(?: tid \d+)?)\s+\[(.)\]\s+(.+?)\s*(?:-\s+-\s*)?$/.exec(line);
    if (!m) continue;
    const key = m[3] === 'k' ? `[kernel] ${m[4]!.trim()}` : `${m[2]!.replace(/^\[JIT\] tid \d+$/, '[JIT]')} ${m[4]!.trim()}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[1]));
  }
  return out;
}

export type Rules = [category: string, test: RegExp][];

/** Sums self percentages into the first category whose pattern matches the symbol. */
export function categorise(self: Map<string, number>, rules: Rules): [string, number][] {
  const sums = new Map<string, number>();
  for (const [sym, pct] of self) {
    const cat = rules.find(([, re]) => re.test(sym))?.[0] ?? 'other';
    sums.set(cat, (sums.get(cat) ?? 0) + pct);
  }
  return [...sums.entries()].sort((a, b) => b[1] - a[1]);
}

export const SERVER_RULES: Rules = [
  ['kernel (sockets, scheduling, memory)', /^\[kernel\]/],
  ['zstd (wasm)', /wasm-function|zstd/],
  ['JSON.stringify', /JsonStringifier|JSON\.stringify/],
  ['JSON.parse', /JsonParser|JSON\.parse/],
  ['raw-json parser', /raw-json/],
  ['xxh3 / xxh64', /xxh/],
  ['frames, segments', /lib\/codec/],
  ['pg driver', /node_modules\/(pg|pg-protocol|pg-types)\//],
  ['hono, @hono/node-server', /node_modules\/(hono|@hono)/],
  ['valibot', /valibot/],
  ['broker (lib/broker)', /lib\/broker/],
  ['http (lib/http, functions)', /lib\/http|functions\//],
  ['db (lib/db)', /lib\/db/],
  ['undici, web streams (Request/Response)', /undici|webstreams|js_transferable/],
  ['node http, net, streams, events', /node:(internal\/)?(_http|http|net|stream|streams|events|buffer|timers|async_hooks|process)/],
  ['GC', /Heap::|Scaveng|Mark|Sweep|Evacuat|GCTracer|Compactor|ConcurrentMarking|MinorGC|MemoryAllocator|Page::/],
  ['string ops (V8)', /String::|StringAdd|StringBuilder|Utf8|utf8|WriteToFlat|Latin1/],
  ['V8 builtins, ICs, interpreter', / Builtins_|IC_|Runtime_|Interpreter|Baseline|Deoptimiz|InstructionStream/],
  ['libc (memcpy, malloc)', /libc\.so/],
  ['other V8 / node C++', /v8::|node::|uv_|std::/],
];

export const POSTGRES_RULES: Rules = [
  ['kernel (sockets, fsync, scheduling)', /^\[kernel\]/],
  ['plpgsql (stripped: no symbols)', /^plpgsql\.so/],
  ['GIN index', / gin|Gin/],
  ['btree index', / _bt| bt/],
  ['bytea compare, memcmp', /byteacmp|memcmp|byteaeq|bytea/],
  ['WAL', /XLog|xlog|^XLog|WAL|pglz|crc32/i],
  ['heap, TOAST, buffers', / heap|toast|Buffer| PageAdd|visibilitymap|BufTable|nocachegetattr/],
  [
    'parse, plan, plan cache',
    /yyparse|core_yylex|raw_parser|parse_|transform| plan|planner|Cached|RevalidateCachedQuery|expression_tree_walker|eval_const|query_tree_walker| pull_|preprocess|copyObject| _copy| _equal|equal$|CheckExprStillValid|exprType|exprTypmod|OverrideSearchPath/,
  ],
  [
    'executor, expressions',
    / Exec|ExprEval|slot_|tts_|fmgr|FunctionCall| array_| arr|unnest|generate_series|MakeExpanded|expanded|TupleDesc|check_stack_depth|AtEOXact_GUC/,
  ],
  ['locks, transactions', /LWLock|LockAcquire|LockRelease| Lock|Proc|Transaction|Snapshot|XidIn|heap_lock|SpinLock|s_lock/],
  ['catalog caches, hashing', /hash_search|hash_bytes|hash_any|SearchCatCache|SysCache|RelationIdGet|hash_uint32|tag_hash|CatalogCache/],
  ['memory contexts', /palloc|pfree|AllocSet|MemoryContext|repalloc|GenerationAlloc|SlabAlloc/],
  [
    'protocol, I/O params',
    /pq_|^pq|printtup|byteain|byteaout|textin|textout|int8in|int8out|array_in|array_out|ReadArray|exec_bind|exec_parse|exec_execute|^Send|socket_/,
  ],
  ['libc', /libc\.so/],
  ['postgres, unresolved static functions', /^postgres 0x/],
];

/** The inclusive share of a few entry points that say where a statement spends its time. */
export function inclusiveOf(inclusive: Map<string, number>, names: readonly string[]): [string, number][] {
  const bySymbol = new Map<string, number>();
  for (const [key, pct] of inclusive) {
    const sym = key.slice(key.lastIndexOf(' ') + 1);
    bySymbol.set(sym, (bySymbol.get(sym) ?? 0) + pct);
  }
  return names.map((n) => [n, bySymbol.get(n) ?? 0] as [string, number]).filter(([, p]) => p > 0);
}

export const POSTGRES_ENTRY_POINTS = [
  'plpgsql_exec_function',
  'gingetbitmap',
  'gininsert',
  'btinsert',
  'heap_insert',
  'heap_update',
  'toast_save_datum',
  'heap_toast_insert_or_update',
  'detoast_attr',
  'XLogInsert',
  'XLogFlush',
  'CommitTransactionCommand',
  'exec_bind_message',
  'exec_parse_message',
  'raw_parser',
  'pg_plan_queries',
  'GetCachedPlan',
  'RevalidateCachedQuery',
  'ExecInitNode',
  'ExecutorStart',
  'standard_ExecutorStart',
  'ExecEndNode',
  'array_in',
  'byteain',
  'printtup',
  'ReadyForQuery',
  'pq_getmessage',
  'secure_write',
  'secure_read',
];
