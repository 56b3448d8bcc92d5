// Bytes stored: every relation of a schema (heap, TOAST, indexes, free-space and visibility maps),
// by table and part, from pg_total_relation_size and its pieces.
import type pg from 'pg';

export interface Part {
  table: string;
  /** 'heap', 'toast', 'maps' or the index name. */
  part: string;
  bytes: number;
}

export async function schemaBytes(sql: pg.Client, schema: string): Promise<Part[]> {
  const { rows } = await sql.query<{ table: string; part: string; bytes: string }>(
    `WITH t AS (
       SELECT c.oid, c.relname, c.reltoastrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'm'))
     SELECT t.relname AS table, 'heap' AS part, pg_relation_size(t.oid) AS bytes FROM t
     UNION ALL
     SELECT t.relname, 'toast', pg_total_relation_size(t.reltoastrelid) FROM t WHERE t.reltoastrelid <> 0
     UNION ALL
     SELECT t.relname, 'maps', pg_relation_size(t.oid, 'fsm') + pg_relation_size(t.oid, 'vm') FROM t
     UNION ALL
     SELECT t.relname, i.indexrelid::regclass::text, pg_relation_size(i.indexrelid) FROM t JOIN pg_index i ON i.indrelid = t.oid`,
    [schema],
  );
  return rows.map((r) => ({ table: r.table, part: r.part, bytes: Number(r.bytes) })).filter((p) => p.bytes > 0);
}

export const totalBytes = (parts: readonly Part[]) => parts.reduce((n, p) => n + p.bytes, 0);

/** "log_segments heap 1.2 MB (12.3 B/msg)" lines, largest first, for the parts above 1% of the total. */
export function describeParts(parts: readonly Part[], msgs: number): string[] {
  const total = totalBytes(parts);
  return [...parts]
    .sort((a, b) => b.bytes - a.bytes)
    .filter((p) => p.bytes >= total / 100)
    .map(
      (p) =>
        `${`${short(p.table)} ${short(p.part.replace(/^[^.]+\./, ''))}`.padEnd(48)} ${(p.bytes / 1e6).toFixed(1).padStart(8)} MB  ${(p.bytes / msgs).toFixed(1).padStart(6)} B/msg`,
    );
}

// pg-boss names a queue's job partition by a 56-digit hash.
const short = (name: string) => name.replace(/j[0-9a-f]{56}/, 'job(bench)');
