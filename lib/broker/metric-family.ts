// One Prometheus metric family as the broker describes it; lib/http/prometheus.ts writes the text.
export interface MetricFamily {
  name: string;
  help: string;
  type: 'gauge' | 'counter';
  samples: { labels?: Record<string, string>; value: number }[];
}
