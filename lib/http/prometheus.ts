// The Prometheus text exposition format (0.0.4): each family's HELP and TYPE once, then all its
// samples together (Queen's interleaved output is what strict parsers reject), label values and
// help text escaped.
import type { MetricFamily } from '../broker/metrics.js';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeHelp = (s: string) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

export function encodePrometheus(families: MetricFamily[], comments: string[] = []): string {
  const lines: string[] = comments.map((c) => `# ${c.replace(/\n/g, ' ')}`);
  for (const f of families) {
    if (f.samples.length === 0) continue;
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {});
      const set = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
      lines.push(`${f.name}${set} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
