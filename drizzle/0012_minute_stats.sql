CREATE TABLE "queen"."minute_stats_state" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"rolled_to" timestamp with time zone NOT NULL,
	"sampled_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "queen"."queue_minute_stats" (
	"queue_id" bigint NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"pushed_messages" bigint DEFAULT 0 NOT NULL,
	"pushed_segments" bigint DEFAULT 0 NOT NULL,
	"pushed_bytes" bigint DEFAULT 0 NOT NULL,
	"partitions_created" integer DEFAULT 0 NOT NULL,
	"dlq_added" integer DEFAULT 0 NOT NULL,
	"retention_messages" bigint DEFAULT 0 NOT NULL,
	"completed_retention_messages" bigint DEFAULT 0 NOT NULL,
	"eviction_messages" bigint DEFAULT 0 NOT NULL,
	"retention_events" integer DEFAULT 0 NOT NULL,
	"sampled_at" timestamp with time zone,
	"partitions" integer,
	"held" bigint,
	"lag_messages" bigint,
	"in_flight" bigint,
	"lagging_pairs" integer,
	"oldest_unconsumed_at" timestamp with time zone,
	"mean_unconsumed_at" timestamp with time zone,
	"consumed_total" bigint,
	"consumed" bigint,
	CONSTRAINT "queue_minute_stats_pk" PRIMARY KEY("queue_id","bucket")
);
--> statement-breakpoint
ALTER TABLE "queen"."queue_minute_stats" ADD CONSTRAINT "queue_minute_stats_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "queen"."queues"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idx_queue_minute_stats_bucket" ON "queen"."queue_minute_stats" USING btree ("bucket");