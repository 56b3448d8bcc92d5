// The package ships no types: it returns one entry per family it meets, samples as strings.
declare module 'parse-prometheus-text-format' {
  export interface ParsedFamily {
    name: string;
    help: string;
    type: 'GAUGE' | 'COUNTER' | 'UNTYPED' | 'HISTOGRAM' | 'SUMMARY';
    metrics: { value: string; labels?: Record<string, string> }[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
